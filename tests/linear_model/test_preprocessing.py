"""The row-norm bound of the linear models: "auto", given bounds, the clipped share, bad input."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_labeldp.accounting import BudgetAccountant
from sklearn_labeldp.exceptions import PrivacyLeakWarning
from sklearn_labeldp.linear_model import (
    DPLeastSquaresClassifier,
    DPLinearSVC,
    DPLogisticRegression,
    RowClippingWarning,
)
from sklearn_labeldp.linear_model._preprocessing import (
    CLASSIFIER_AUTO_QUANTILE,
    clip_rows,
    plan_row_bound,
    row_norms,
)

# Every solver family once; all of them call the bound data_norm.
ESTIMATORS = [
    lambda **kw: DPLogisticRegression(**kw),
    lambda **kw: DPLogisticRegression(solver="fc", delta=1e-5, **kw),
    lambda **kw: DPLinearSVC(**kw),
    lambda **kw: DPLeastSquaresClassifier(**kw),
]
IDS = ["logistic", "logistic-fc", "svc", "least-squares"]


def _data(n=200, n_long=0):
    """Rows of norm 1, except the first ``n_long`` of norm 3; labels from the first feature."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X[:n_long] *= 3.0
    return X, (X[:, 0] > 0).astype(int)


def _fit_quietly(estimator, X, y):
    """Fit, failing on any warning at all."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return estimator.fit(X, y)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_auto_is_the_default_and_the_median_row_norm(make):
    # 100 rows of norm 3 and 100 of norm 1: the median of 200 norms is the mean of the
    # 100th and 101st smallest, (1 + 3) / 2 = 2, so the 100 long rows (half) are
    # clipped along their own direction, without a warning.
    X, y = _data(n_long=100)
    clf = _fit_quietly(make(classes=[0, 1], random_state=0), X, y)
    assert clf.get_params()["data_norm"] == "auto"
    assert CLASSIFIER_AUTO_QUANTILE == 0.5
    assert clf.data_norm_ == np.quantile(row_norms(X), 0.5) == pytest.approx(2.0)
    assert clf.clipped_fraction_ == 0.5
    given = make(classes=[0, 1], random_state=0, data_norm=clf.data_norm_).fit(X, y)
    np.testing.assert_array_equal(clf.coef_, given.coef_)
    # Sparse input finds the same bound.
    assert make(classes=[0, 1], random_state=0).fit(sp.csr_matrix(X), y).data_norm_ == (
        pytest.approx(2.0, rel=1e-14))


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_given_bound_reports_the_clipped_fraction(make):
    # 100 of 200 rows above the bound: half, as many as "auto" clips, so no warning.
    X, y = _data(n_long=100)
    clf = _fit_quietly(make(classes=[0, 1], random_state=0, data_norm=2.0), X, y)
    assert clf.data_norm_ == 2.0
    assert clf.clipped_fraction_ == 0.5
    # 101 rows: 50.5% > 50%, a warning that names the share and points at the caller's fit.
    X, y = _data(n_long=101)
    with pytest.warns(RowClippingWarning, match=r"50\.5% .*data_norm=2") as record:
        clf = make(classes=[0, 1], random_state=0, data_norm=2.0).fit(X, y)
    assert clf.clipped_fraction_ == 0.505
    assert [w.filename for w in record] == [__file__]
    assert issubclass(RowClippingWarning, UserWarning)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_full_dp_auto_warns_that_it_reads_private_features(make):
    X, y = _data(n_long=130)
    match = "data_norm='auto'.*quantile of the private features' row norms"
    with pytest.warns(PrivacyLeakWarning, match=match) as record:
        clf = make(privacy="full", classes=[0, 1], random_state=0).fit(X, y)
    assert [w.filename for w in record] == [__file__]
    assert clf.data_norm_ == np.quantile(row_norms(X), 0.5) == pytest.approx(3.0)
    assert not hasattr(clf, "clipped_fraction_")


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_full_dp_releases_nothing_about_clipping(make):
    # 100% of the rows clipped: under full DP that share is a statistic of the private
    # features, so it appears neither as an attribute nor in a warning.
    X, y = _data(n_long=200)
    clf = _fit_quietly(make(privacy="full", classes=[0, 1], random_state=0, data_norm=1.0), X, y)
    assert clf.data_norm_ == 1.0
    assert not hasattr(clf, "clipped_fraction_")


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("bad", ["max", "AUTO", "", None, 0.0, -1.0, np.inf, np.nan])
def test_bad_bound_is_refused_before_any_spend(make, bad):
    X, y = _data()
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    clf = make(classes=[0, 1], accountant=accountant, data_norm=bad)
    with pytest.raises(ValueError, match="data_norm"):
        clf.fit(X, y)
    assert accountant.total().epsilon == 0.0
    assert not hasattr(clf, "coef_") and not hasattr(clf, "data_norm_")


def test_rows_rounded_a_hair_above_the_bound_do_not_count_as_clipped():
    X = np.array([[0.6, 0.8]] * 4 + [[3.0, 4.0]] * 6)
    X[:4] *= 1 + 1e-15
    with pytest.warns(RowClippingWarning, match="60.0%"):
        _, attributes = plan_row_bound(X, 1.0, privacy="label")
    assert attributes["clipped_fraction_"] == 0.6


@pytest.mark.parametrize("n_typical", [9, 199])
def test_auto_bound_is_the_quantile_and_clips_an_outlier_without_warning(n_typical):
    # Typical rows of norm about 1 and one outlier of norm 100 (the last row): the
    # outlier's norm does not enter the median, and "auto" clips about half of the rows
    # without a warning, since that is what it is for.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n_typical + 1, 5)) / np.sqrt(5)
    X[-1] *= 100.0 / np.linalg.norm(X[-1])
    norms = row_norms(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bound, attributes = plan_row_bound(X, "auto", privacy="label", quantile=0.5)
        sparse_bound, _ = plan_row_bound(sp.csr_matrix(X), "auto", privacy="label",
                                         quantile=0.5)
    assert bound == attributes["data_norm_"] == np.quantile(norms, 0.5)
    assert sparse_bound == pytest.approx(bound, rel=1e-14)
    assert bound < 3.0
    assert attributes["clipped_fraction_"] == np.mean(norms > bound) == 0.5
    assert row_norms(clip_rows(X, bound))[-1] == pytest.approx(bound)  # the outlier, clipped
    # A given bound that clips more than half the rows warns.
    with pytest.warns(RowClippingWarning, match=r"'auto' \(the median row norm\)"):
        plan_row_bound(X, 0.5 * norms.min(), privacy="label", quantile=0.5)
    # plan_row_bound's own default is the 99th percentile, which clips about 1% (the
    # regressors'); a given bound there warns above 5%.
    assert plan_row_bound(X, "auto", privacy="label")[0] == np.quantile(norms, 0.99)
    with pytest.warns(RowClippingWarning, match=r"'auto' \(the 99th percentile"):
        plan_row_bound(X, np.quantile(norms, 0.8), privacy="label")


def test_plan_row_bound_of_zero_rows_is_one():
    X = np.zeros((3, 2))
    assert plan_row_bound(X, "auto", privacy="label") == (
        1.0, {"data_norm_": 1.0, "clipped_fraction_": 0.0})
    assert plan_row_bound(sp.csr_matrix(X), "auto", privacy="label") == (
        1.0, {"data_norm_": 1.0, "clipped_fraction_": 0.0})
    assert plan_row_bound(X, 0.5, privacy="full") == (0.5, {"data_norm_": 0.5})


def test_auto_falls_back_to_the_largest_norm_when_the_percentile_is_zero():
    # 199 zero rows and one of norm 5: the 99th percentile is 0, so the bound is the
    # largest norm and nothing is clipped.
    X = np.zeros((200, 2))
    X[7] = [3.0, 4.0]
    for features in (X, sp.csr_matrix(X)):
        assert plan_row_bound(features, "auto", privacy="label") == (
            5.0, {"data_norm_": 5.0, "clipped_fraction_": 0.0})


def test_row_norms_dense_and_sparse():
    X = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 0.0]])
    np.testing.assert_array_equal(row_norms(X), [5.0, 0.0, 1.0])
    np.testing.assert_array_equal(row_norms(sp.csr_matrix(X)), [5.0, 0.0, 1.0])
