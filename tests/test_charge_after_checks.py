"""A configuration error costs nothing: every label-free check runs before the charge.

Each case fits with a fresh accountant, expects a clear error that names the
parameter at fault, and then checks that nothing was recorded.
"""

import numpy as np
import pytest
from sklearn import config_context
from sklearn.datasets import make_blobs
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.multioutput import MultiOutputRegressor
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.svm import SVR

from sklearn_labeldp import RRWithPriorClassifier
from sklearn_labeldp.accounting import BudgetAccountant, PrivacyBudget
from sklearn_labeldp.classifiers import ALIBIClassifier, PATEClassifier, VectorApproxClassifier
from sklearn_labeldp.model_selection import PrivateGridSearchCV
from sklearn_labeldp.priors import ClusterPrior

K = 3


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(300, n_features=4, centers=K, random_state=0)
    return X.astype(np.float32), y


def assert_costs_nothing(estimator, X, y, match, **fit_params):
    accountant = estimator.get_params()["accountant"]
    with pytest.raises(ValueError, match=match):
        estimator.fit(X, y, **fit_params)
    assert accountant.total() == PrivacyBudget(0.0)
    assert accountant.spends == []


def test_regressor_where_rr_needs_a_classifier(blobs):
    # A regressor fits the label codes and predicts numbers between them: accepted and
    # charged up to commit fcde750.
    clf = RRWithPriorClassifier(LinearRegression(), classes=range(K),
                                accountant=BudgetAccountant())
    assert_costs_nothing(clf, *blobs, match=r"`estimator` must be a classifier.*LinearRegression")


def _sample_weight_cases():
    metas = {
        "rr": lambda acc: RRWithPriorClassifier(LogisticRegression(), classes=range(K),
                                                accountant=acc),
        "alibi": lambda acc: ALIBIClassifier(Ridge(), classes=range(K),
                                             accountant=acc),
        "vector_approx": lambda acc: VectorApproxClassifier(
            MultiOutputRegressor(Ridge()), classes=range(K), accountant=acc),
        "pate": lambda acc: PATEClassifier(LogisticRegression(), n_teachers=5, n_queries=30,
                                           classes=range(K), accountant=acc),
    }
    weights = {
        "negative": (lambda n: np.r_[-1.0, np.ones(n - 1)], r"sample_weight.*>= 0.*1 negative"),
        "nan": (lambda n: np.r_[np.nan, np.ones(n - 1)], r"sample_weight.*finite.*NaN"),
        "inf": (lambda n: np.r_[np.inf, np.ones(n - 1)], r"sample_weight.*finite.*infinity"),
    }
    return [
        pytest.param(meta, *weight, id=f"{name}-{kind}")
        for name, meta in metas.items()
        for kind, weight in weights.items()
    ]


@pytest.mark.parametrize(("make", "weights", "match"), _sample_weight_cases())
def test_bad_sample_weight_costs_nothing(blobs, make, weights, match):
    # Every estimator whose fit takes sample_weight (the meta-estimators) checks it
    # before the charge; a negative weight was accepted and charged up to fcde750.
    X, y = blobs
    clf = make(BudgetAccountant(delta=0.5))
    assert_costs_nothing(clf, X, y, match, sample_weight=weights(X.shape[0]))


def test_bad_sample_weight_costs_nothing_with_metadata_routing(blobs):
    X, y = blobs
    with config_context(enable_metadata_routing=True):
        clf = RRWithPriorClassifier(
            LogisticRegression().set_fit_request(sample_weight=True), classes=range(K),
            accountant=BudgetAccountant(),
        )
        assert_costs_nothing(clf, X, y, r"sample_weight.*>= 0",
                             sample_weight=-np.ones(X.shape[0]))


def test_post_processing_candidates_are_checked_before_the_charge(blobs):
    # The candidates' base learners are fitted only after the one release: each gets
    # its planning fit (label-free checks, trial fit) before it. Up to fcde750 a
    # regressor candidate was found only after the charge.
    base = RRWithPriorClassifier(KNeighborsClassifier(), classes=range(K))
    grid = {"estimator": [KNeighborsClassifier(3), LinearRegression()]}
    search = PrivateGridSearchCV(base, grid, epsilon=1.0, strategy="post_processing", cv=3,
                                 accountant=BudgetAccountant())
    assert_costs_nothing(search, *blobs, match=r"`estimator` must be a classifier")


def test_single_output_regressor_for_bit_vectors(blobs):
    clf = VectorApproxClassifier(SVR(), classes=range(K), accountant=BudgetAccountant())
    assert_costs_nothing(clf, *blobs, match=r"`estimator`.*SVR.*trial fit.*MultiOutputRegressor")


def test_stage_without_examples(blobs):
    X, y = blobs
    clf = RRWithPriorClassifier(LogisticRegression(), classes=range(K), n_stages=5,
                                accountant=BudgetAccountant())
    assert_costs_nothing(clf, X[:4], y[:4], match="n_stages")


@pytest.mark.parametrize(
    ("prior", "n_rows", "match"),
    [
        ({"n_clusters": 5, "epsilon": 1.0}, 300, r"prior\.epsilon=1\.0.*must be < epsilon=1\.0"),
        ({"n_clusters": 5, "epsilon": 0.0}, 300, "'epsilon' parameter of ClusterPrior"),
        ({"n_clusters": 301, "epsilon": 0.5}, 300, r"prior\.n_clusters=301 > n_samples=300"),
        ({"n_clusters": 8, "epsilon": 0.5}, 4, r"prior\.n_clusters=8 > n_samples=4"),
    ],
    ids=["epsilon_too_large", "epsilon_zero", "more_clusters_than_rows", "tiny_data"],
)
def test_cluster_prior_configuration(blobs, prior, n_rows, match):
    X, y = blobs
    clf = RRWithPriorClassifier(KNeighborsClassifier(1), epsilon=1.0, classes=range(K),
                                prior=ClusterPrior(**prior), accountant=BudgetAccountant())
    assert_costs_nothing(clf, X[:n_rows], y[:n_rows], match=match)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n_teachers": 301}, r"n_teachers=301 exceeds"),
        ({"n_queries": 301}, r"n_queries=301 exceeds"),
        ({"estimator": LinearRegression()}, r"`estimator` must be a classifier"),
        ({"student": KNeighborsRegressor()}, r"`student` must be a classifier"),
        ({"student": KNeighborsClassifier(n_neighbors=500)}, r"`student`.*trial fit"),
        ({"estimator": KNeighborsClassifier(n_neighbors=100)}, r"`estimator`.*trial fit"),
    ],
    ids=["teachers", "queries", "regressor_teacher", "regressor_student", "student_fit",
         "teacher_fit"],
)
def test_pate_configuration(blobs, params, match):
    clf = PATEClassifier(**{"n_teachers": 10, "n_queries": 30, "classes": range(K),
                            "accountant": BudgetAccountant(delta=0.5), **params})
    assert_costs_nothing(clf, *blobs, match=match)


def test_random_stopping_refuses_delta_spending_candidates(blobs):
    search = PrivateGridSearchCV(
        ALIBIClassifier(KNeighborsRegressor(), classes=range(K), noise="gaussian", delta=1e-5),
        {"estimator__n_neighbors": [3, 5]}, epsilon=1.0, strategy="random_stopping",
        accountant=BudgetAccountant(),
    )
    assert_costs_nothing(search, *blobs, match="pure-DP candidates")


def test_one_bad_candidate_stops_the_search_before_its_charge(blobs):
    search = PrivateGridSearchCV(
        RRWithPriorClassifier(KNeighborsClassifier(), classes=range(K), n_stages=2),
        {"estimator__n_neighbors": [3, 500]}, epsilon=1.0, accountant=BudgetAccountant(),
    )
    assert_costs_nothing(search, *blobs, match="n_neighbors = 500")


class TestNetworks:
    """The network's own checks, reached through the meta-estimators' trial fit."""

    @pytest.fixture(autouse=True)
    def _torch(self):
        self.torch = pytest.importorskip("torch")
        pytest.importorskip("skorch")

    def net(self, **params):
        from sklearn_labeldp.nn import LabelDPNetClassifier

        torch = self.torch

        class MLP(torch.nn.Module):
            def __init__(self, n_features=4, n_outputs=K):
                super().__init__()
                self.layer = torch.nn.Linear(n_features, n_outputs)

            def forward(self, X):
                return self.layer(X)

        return LabelDPNetClassifier(MLP, **{"max_epochs": 2, **params})

    @pytest.mark.parametrize("meta", [RRWithPriorClassifier, ALIBIClassifier,
                                      VectorApproxClassifier, PATEClassifier])
    @pytest.mark.parametrize(
        ("params", "match"),
        [
            ({"max_epochs": 0}, "max_epochs"),
            ({"batch_size": 0}, "batch_size"),
            ({"module__n_features": 7}, r"module.*shape \(\d+, 4\)"),
        ],
        ids=["max_epochs", "batch_size", "input_shape"],
    )
    def test_bad_network_configuration(self, blobs, meta, params, match):
        clf = meta(self.net(**params), classes=range(K), accountant=BudgetAccountant())
        assert_costs_nothing(clf, *blobs, match=match)

    def test_unavailable_device(self, blobs):
        if self.torch.cuda.is_available():
            pytest.skip("CUDA is available here")
        clf = RRWithPriorClassifier(self.net(device="cuda"), classes=range(K),
                                    accountant=BudgetAccountant())
        assert_costs_nothing(clf, *blobs, match="device")
