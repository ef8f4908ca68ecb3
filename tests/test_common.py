"""scikit-learn's estimator checks for every public estimator.

One list of instances (``INSTANCES``); the checks each fails by design, with
the reasons, are the package's own
(:func:`sklearn_labeldp.utils.expected_failed_checks`, which users pass to
``check_estimator`` too). ``all_estimators()`` finds the
public estimators, and a test fails when one of them has no instance here. The
estimators of ``sklearn_labeldp.nn`` are listed, and checked, only when the
torch extra (PyTorch and skorch) is installed.
"""

import importlib.util
import warnings

import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_labeldp import PrivacyLeakWarning
from sklearn_labeldp.classifiers import (
    ALIBIClassifier,
    PATEClassifier,
    RRWithPriorClassifier,
    VectorApproxClassifier,
)
from sklearn_labeldp.linear_model import (
    DPLeastSquaresClassifier,
    DPLeastSquaresRegressor,
    DPLinearSVC,
    DPLogisticRegression,
    NormalizedRandomFourierFeatures,
)
from sklearn_labeldp.model_selection import PrivateGridSearchCV
from sklearn_labeldp.priors import ClusterPrior
from sklearn_labeldp.regression import NoisyLabelRegressor
from sklearn_labeldp.utils import all_estimators, expected_failed_checks

HAS_TORCH = all(importlib.util.find_spec(name) is not None for name in ("torch", "skorch"))

# A large epsilon keeps the noisy labels close to the true ones, so the checks
# that demand a good training accuracy test the plumbing rather than the
# privacy-utility trade-off. The checks that do not seed the estimator rely on
# these seeds: a tiny stage can otherwise draw noisy labels of a single class,
# which LogisticRegression refuses to fit.
INSTANCES = [
    RRWithPriorClassifier(KNeighborsClassifier(n_neighbors=3), epsilon=8.0, random_state=0),
    RRWithPriorClassifier(
        KNeighborsClassifier(n_neighbors=3), epsilon=8.0, n_stages=2, random_state=0
    ),
    RRWithPriorClassifier(LogisticRegression(), epsilon=8.0, random_state=0),
    RRWithPriorClassifier(LogisticRegression(), epsilon=8.0, n_stages=2, random_state=0),
    RRWithPriorClassifier(
        KNeighborsClassifier(n_neighbors=3), epsilon=8.0,
        prior=ClusterPrior(n_clusters=3, epsilon=1.0), random_state=0,
    ),
    # Seeds 0 and 1 draw single-class noisy labels for this one in the 12-row
    # sample-weight checks; 2 does not.
    RRWithPriorClassifier(
        LogisticRegression(), epsilon=8.0, n_stages=2,
        prior=ClusterPrior(n_clusters=3, epsilon=1.0), random_state=2,
    ),
    VectorApproxClassifier(KNeighborsRegressor(n_neighbors=3), epsilon=8.0, random_state=0),
    VectorApproxClassifier(KNeighborsClassifier(n_neighbors=3), epsilon=8.0, random_state=0),
    VectorApproxClassifier(LogisticRegression(), epsilon=8.0, random_state=0),
    ALIBIClassifier(KNeighborsRegressor(n_neighbors=3), epsilon=8.0, random_state=0),
    ALIBIClassifier(
        KNeighborsClassifier(n_neighbors=3), epsilon=8.0, post_processing="argmax", n_rounds=1,
        random_state=0,
    ),
    ALIBIClassifier(LogisticRegression(), epsilon=8.0, random_state=0),
    ALIBIClassifier(
        LogisticRegression(), epsilon=8.0, noise="gaussian", delta=1e-5, random_state=0
    ),
    # Pipeline bases: X reaches the pipeline as given (the checks' dtypes, lists,
    # DataFrames and sparse matrices included); the base validates it.
    RRWithPriorClassifier(
        make_pipeline(StandardScaler(), LogisticRegression()), epsilon=8.0, random_state=0
    ),
    ALIBIClassifier(
        make_pipeline(StandardScaler(), KNeighborsRegressor(n_neighbors=3)), epsilon=8.0,
        random_state=0,
    ),
    # epsilon=1e6 and the default row bound (the median row norm: about half clipped)
    # make the linear models nearly the non-private ones. Full DP needs a public
    # bound: data_norm="auto" would read the private features.
    DPLeastSquaresClassifier(epsilon=1e6, random_state=0),
    DPLeastSquaresClassifier(epsilon=1e6, formulation="ridge", random_state=0),
    DPLeastSquaresClassifier(epsilon=1e6, privacy="full", data_norm=10.0, random_state=0),
    DPLogisticRegression(epsilon=1e6, random_state=0),
    DPLogisticRegression(epsilon=1e6, solver="output", random_state=0),
    DPLogisticRegression(epsilon=1e6, delta=1e-5, solver="newton", random_state=0),
    DPLogisticRegression(epsilon=1e6, delta=1e-5, solver="fc", random_state=0),
    DPLogisticRegression(epsilon=1e6, privacy="full", data_norm=10.0, random_state=0),
    DPLogisticRegression(epsilon=1e6, delta=1e-5, solver="sgd", n_noisy_steps=50, random_state=0),
    DPLogisticRegression(epsilon=1e6, delta=1e-5, solver="adam", n_noisy_steps=50, random_state=0),
    DPLogisticRegression(epsilon=1e6, delta=1e-5, solver="adam", privacy="full", data_norm=10.0,
                         n_noisy_steps=50, random_state=0),
    # Minibatches of 5: the checks fit on as few as 10 rows.
    DPLogisticRegression(epsilon=1e6, delta=1e-5, solver="sgd", privacy="full", data_norm=3.0,
                         batch_size=5, n_noisy_steps=200, random_state=0),
    DPLinearSVC(epsilon=1e6, random_state=0),
    DPLinearSVC(epsilon=1e6, solver="output", random_state=0),
    NormalizedRandomFourierFeatures(random_state=0),
    # Few teachers and every row a query keep the checks' tiny data sets answered;
    # epsilon=1e3 makes the aggregate nearly the teachers' plurality.
    PATEClassifier(
        KNeighborsClassifier(n_neighbors=1), n_teachers=2, n_queries=0.99, epsilon=1e3,
        aggregator="gnmax", random_state=0,
    ),
    PATEClassifier(
        LogisticRegression(), n_teachers=2, n_queries=0.99, epsilon=1e3, threshold=0.5,
        aggregator="confident_gnmax", random_state=0,
    ),
    # Regressors: without label_range (the checks' targets vary) the range is
    # inferred, with a leak warning; a large epsilon keeps the released labels close.
    NoisyLabelRegressor(KNeighborsRegressor(n_neighbors=3), epsilon=30.0, random_state=0),
    NoisyLabelRegressor(KNeighborsRegressor(n_neighbors=3), epsilon=30.0, mechanism="laplace",
                        random_state=0),
    DPLeastSquaresRegressor(epsilon=1e6, alpha=1e-6, random_state=0),
    DPLeastSquaresRegressor(epsilon=1e6, alpha=1e-6, privacy="full", data_norm=10.0,
                            random_state=0),
    # One nearest neighbour fits any holdout part, however small.
    PrivateGridSearchCV(
        RRWithPriorClassifier(KNeighborsClassifier(n_neighbors=1), epsilon=8.0),
        {"estimator__weights": ["uniform", "distance"]},
        epsilon=8.0,
        random_state=0,
    ),
]

if HAS_TORCH:
    import torch

    from sklearn_labeldp.nn import DPSGDClassifier, LabelDPNetClassifier

    class TinyMLP(torch.nn.Module):
        """Two layers; the first infers its width, as the checks vary n_features."""

        def __init__(self, n_outputs=2):
            super().__init__()
            self.layers = torch.nn.Sequential(
                torch.nn.LazyLinear(8), torch.nn.ReLU(), torch.nn.Linear(8, n_outputs)
            )

        def forward(self, X):
            return self.layers(X)

    def tiny_net(**params):
        return LabelDPNetClassifier(TinyMLP, max_epochs=5, lr=0.3, batch_size=32, **params)

    INSTANCES += [
        tiny_net(random_state=0),
        RRWithPriorClassifier(tiny_net(), epsilon=8.0, random_state=0),
        VectorApproxClassifier(tiny_net(), epsilon=8.0, random_state=0),
        ALIBIClassifier(tiny_net(), epsilon=8.0, random_state=0),
        # A large epsilon (little noise) and a loose clipping norm: the checks that
        # demand a good training accuracy test the plumbing.
        DPSGDClassifier(tiny_net(), epsilon=100.0, max_grad_norm=10.0, random_state=0),
    ]
    @pytest.fixture(autouse=True, scope="module")
    def one_thread():
        # Tiny networks gain nothing from intra-op threads, and with pytest-xdist
        # workers on 2 cores extra threads only oversubscribe the machine.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        yield
        torch.set_num_threads(threads)


def test_every_public_estimator_has_an_instance():
    checked = {type(estimator) for estimator in INSTANCES}
    missing = [name for name, cls in all_estimators() if cls not in checked]
    assert not missing, f"add an instance of {missing} to INSTANCES"


@parametrize_with_checks(INSTANCES, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        # The checks fit without `classes`; the leak warning is tested elsewhere.
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)


def test_check_estimator_passes_with_the_published_expected_failures():
    # What a user runs: scikit-learn's check_estimator on a default estimator, with
    # the library's own list of the checks it fails by design (and why).
    from sklearn.utils.estimator_checks import check_estimator

    estimator = RRWithPriorClassifier(random_state=0)
    expected = expected_failed_checks(estimator)
    assert all(isinstance(reason, str) and reason for reason in expected.values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        results = check_estimator(estimator, expected_failed_checks=expected, on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert not failed
    assert {r["check_name"] for r in results if r["status"] == "xfail"} <= set(expected)
