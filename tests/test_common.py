"""scikit-learn's estimator checks for every public estimator.

One list of instances (``INSTANCES``) and one table of expected failures
(``EXPECTED_FAILURES``, a reason per check). ``all_estimators()`` finds the
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
from sklearn.utils.validation import has_fit_parameter

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
from sklearn_labeldp.utils import all_estimators

HAS_TORCH = all(importlib.util.find_spec(name) is not None for name in ("torch", "skorch"))

META_ESTIMATORS = (
    RRWithPriorClassifier, VectorApproxClassifier, ALIBIClassifier, PATEClassifier,
    NoisyLabelRegressor,
)

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
        random_state=0,
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

NOISE_PER_EXAMPLE = (
    "the mechanism draws one noisy label per example: an example repeated twice "
    "gets two independent noisy labels, one with weight 2 gets a single one"
)
NO_WEIGHTS = (
    "the meta-estimator forwards sample_weight to its base estimator, whose fit accepts none"
)
NO_ITERATION_COUNT = (
    "objective and output perturbation withhold n_iter_: the optimiser's iteration "
    "count depends on the labels and is not covered by the privacy guarantee"
)


def base_takes_no_weights(estimator):
    return isinstance(estimator, META_ESTIMATORS) and not has_fit_parameter(
        estimator.estimator, "sample_weight"
    )


def perturbs_objective_or_output(estimator):
    erm = isinstance(estimator, (DPLogisticRegression, DPLinearSVC))
    return erm and estimator.solver in ("objective", "output")


# Keys: an estimator class (or tuple of classes), or a predicate on the instance.
# An instance expects every failure of every key it matches; later keys win.
EXPECTED_FAILURES = {
    META_ESTIMATORS: {
        "check_sample_weight_equivalence_on_dense_data": NOISE_PER_EXAMPLE,
        "check_sample_weight_equivalence_on_sparse_data": NOISE_PER_EXAMPLE,
    },
    PATEClassifier: {
        check: (
            "rows are drawn one by one into the teachers' parts and the queries: an "
            "example repeated twice can land in two parts, one with weight 2 in one"
        )
        for check in (
            "check_sample_weight_equivalence_on_dense_data",
            "check_sample_weight_equivalence_on_sparse_data",
        )
    },
    base_takes_no_weights: {
        check: NO_WEIGHTS
        for check in (
            "check_sample_weight_equivalence_on_dense_data",
            "check_sample_weight_equivalence_on_sparse_data",
            "check_sample_weights_list",
            "check_sample_weights_not_an_array",
            "check_sample_weights_pandas_series",
            "check_sample_weights_shape",
            "check_sample_weights_not_overwritten",
            "check_all_zero_sample_weights_error",
            "check_classifiers_one_label_sample_weights",
        )
    },
    perturbs_objective_or_output: {
        "check_non_transformer_estimators_n_iter": NO_ITERATION_COUNT,
    },
    PrivateGridSearchCV: {
        "check_fit2d_1feature": (
            "holdout trains each candidate on its own third of the check's 10 rows: a part "
            "holds a single label, and a candidate without `classes` refuses one class"
        ),
    },
}

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
    EXPECTED_FAILURES[LabelDPNetClassifier] = {
        "check_no_attributes_set_in_init": (
            "skorch's NeuralNet.__init__ sets history_, initialized_ and virtual_params_"
        ),
        "check_set_params": (
            "skorch's get_params lists its bookkeeping set _params_to_validate; the check "
            "sets it to a float, on which skorch's own set_params then calls .add"
        ),
    }

    @pytest.fixture(autouse=True, scope="module")
    def one_thread():
        # Tiny networks gain nothing from intra-op threads, and with pytest-xdist
        # workers on 2 cores extra threads only oversubscribe the machine.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        yield
        torch.set_num_threads(threads)


def expected_failed_checks(estimator):
    failures = {}
    for key, checks in EXPECTED_FAILURES.items():
        if isinstance(estimator, key) if isinstance(key, (type, tuple)) else key(estimator):
            failures.update(checks)
    return failures


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
