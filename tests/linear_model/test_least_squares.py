"""DPLeastSquaresClassifier: noise calibration, sensitivities, agreement, estimator checks."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import norm
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sklearn_labeldp import PrivacyLeakWarning
from sklearn_labeldp.accounting import BudgetAccountant, zcdp_to_approx_dp
from sklearn_labeldp.linear_model import _least_squares, _statistics
from sklearn_labeldp.linear_model._gram_noise import project_psd
from sklearn_labeldp.linear_model._least_squares import (
    DPLeastSquaresClassifier,
    least_squares_label_sensitivities,
    least_squares_sensitivities,
    noisy_least_squares_statistics,
)
from sklearn_labeldp.linear_model._preprocessing import (
    clip_rows,
    clipped_design,
    plan_row_bound,
    row_norms,
)

SQRT2 = math.sqrt(2.0)


def _exact_statistics(Z, codes, n_classes):
    Y = np.eye(n_classes)[codes]
    A = np.stack([Z[codes == j].T @ Z[codes == j] for j in range(n_classes)])
    return {"G": Z.T @ Z, "A": A, "b": Z.T @ Y}


def _design(X, R, fit_intercept):
    """Independent re-implementation of the clipping and intercept column."""
    norms = np.linalg.norm(X, axis=1)
    Z = X * np.minimum(1.0, R / np.maximum(norms, 1e-300))[:, None]
    if fit_intercept:
        Z = np.hstack([Z, np.full((len(Z), 1), R)]) / SQRT2
    return Z


def _nonprivate_scores(X_train, codes, X_test, *, n_classes, formulation, gram_weight, alpha,
                       R, fit_intercept):
    """The same closed form without noise, written directly from Mehta et al. (2023)."""
    Z = _design(X_train, R, fit_intercept)
    st = _exact_statistics(Z, codes, n_classes)
    p = Z.shape[1]
    if formulation == "ridge":
        theta = np.linalg.solve(st["G"] + alpha * np.eye(p), st["b"]).T
    else:
        theta = np.stack([
            np.linalg.solve(st["A"][j] + gram_weight * st["G"] + alpha * np.eye(p),
                            st["b"][:, j])
            for j in range(n_classes)
        ])
    Zt = X_test
    if fit_intercept:
        Zt = np.hstack([X_test, np.full((len(X_test), 1), R)]) / SQRT2
        # raw (unclipped) test features for the coefficient part, as the estimator does
        return Zt[:, :-1] @ theta[:, :-1].T + Zt[:, -1:] @ theta[:, -1:].T
    return Zt @ theta.T


# ----------------------------------------------------------------------------- mechanism


@pytest.mark.parametrize(
    "privacy, formulation, expected",
    [
        ("label", "weighted", {"A": SQRT2 * 4.0, "b": SQRT2 * 2.0}),
        ("full", "weighted", {"G": 4.0, "A": 4.0, "b": 2.0}),
        ("label", "ridge", {"b": SQRT2 * 2.0}),
        ("full", "ridge", {"G": 4.0, "b": 2.0}),
    ],
)
def test_sensitivities_of_the_released_statistics(privacy, formulation, expected):
    # R = 2: label DP uses substitution sensitivities sqrt(2) R^2 and sqrt(2) R,
    # full DP add/remove sensitivities R^2 and R (Mehta et al. 2023, Alg. 3).
    sensitivities = least_squares_sensitivities(privacy, formulation, 2.0)
    assert sensitivities.keys() == expected.keys()
    for key, value in expected.items():
        assert sensitivities[key] == pytest.approx(value)


def _neighbour_sensitivity(privacy, formulation):
    """Largest observed change of each statistic between neighbouring datasets."""
    rng = np.random.default_rng(0)
    K = 4
    Z = rng.normal(size=(30, 5))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)  # all rows at norm R = 1
    codes = rng.integers(K, size=30)
    base = _exact_statistics(Z, codes, K)
    worst = {"G": 0.0, "A": 0.0, "b": 0.0}
    for i in range(30):
        if privacy == "label":
            other = codes.copy()
            other[i] = (codes[i] + 1) % K
            nb = _exact_statistics(Z, other, K)
        else:
            keep = np.arange(30) != i
            nb = _exact_statistics(Z[keep], codes[keep], K)
        for key in worst:
            worst[key] = max(worst[key], np.linalg.norm(base[key] - nb[key]))
    return worst


@pytest.mark.parametrize("privacy", ["label", "full"])
def test_sensitivities_are_the_observed_ones(privacy):
    # Rows at exactly norm R = 1 attain the bounds.
    worst = _neighbour_sensitivity(privacy, "weighted")
    sensitivities = least_squares_sensitivities(privacy, "weighted", 1.0)
    assert worst["A"] == pytest.approx(sensitivities["A"])
    assert worst["b"] == pytest.approx(sensitivities["b"])
    if privacy == "label":
        assert worst["G"] == 0.0 and "G" not in sensitivities
    else:
        assert worst["G"] == pytest.approx(sensitivities["G"])


@pytest.mark.parametrize("formulation", ["weighted", "ridge"])
def test_full_dp_label_sensitivities_on_neighbouring_label_vectors(formulation):
    """Full DP releases G too; a label change moves G by 0 and (A_j), (b_j) by at most
    sqrt(2) R^2 and sqrt(2) R (tight for rows at the bound), through the mechanism itself."""
    rng = np.random.default_rng(3)
    K, n, R = 4, 40, 2.0
    Z = rng.normal(size=(n, 5))
    Z *= R / np.linalg.norm(Z, axis=1, keepdims=True)  # every row at norm R
    codes = rng.integers(K, size=n)
    kw = dict(Z=Z, n_classes=K, privacy="full", formulation=formulation, noise_multiplier=0.0,
              data_norm=R, random_state=0)
    base = noisy_least_squares_statistics(codes, **kw)
    bounds = least_squares_label_sensitivities("full", formulation, R)
    assert set(base) == set(bounds) == set(least_squares_sensitivities("full", formulation, R))
    assert bounds["G"] == 0.0
    worst = dict.fromkeys(bounds, 0.0)
    for i in range(n):
        other = codes.copy()
        other[i] = (codes[i] + 1 + rng.integers(K - 1)) % K
        neighbour = noisy_least_squares_statistics(other, **kw)
        for key in bounds:
            change = np.linalg.norm(base[key] - neighbour[key])
            assert change <= bounds[key] * (1 + 1e-12)
            worst[key] = max(worst[key], change)
    assert worst["G"] == 0.0
    for key in set(bounds) - {"G"}:
        assert worst[key] == pytest.approx(bounds[key])


@pytest.mark.parametrize(
    "privacy, formulation", [("label", "weighted"), ("full", "weighted"),
                             ("label", "ridge"), ("full", "ridge")]
)
def test_gaussian_noise_std_equals_calibrated_sigma(privacy, formulation):
    rng = np.random.default_rng(1)
    n, p, K, R, s = 40, 3, 3, 2.0, 0.7
    Z = rng.normal(size=(n, p))
    Z *= R / np.linalg.norm(Z, axis=1, keepdims=True) * rng.uniform(0.2, 1.0, size=(n, 1))
    codes = rng.integers(K, size=n)
    exact = _exact_statistics(Z, codes, K)
    stds = {key: s * value
            for key, value in least_squares_sensitivities(privacy, formulation, R).items()}
    reps = 600
    errors = {key: [] for key in stds}
    gen = np.random.default_rng(2)
    for _ in range(reps):
        out = noisy_least_squares_statistics(
            codes, Z=Z, n_classes=K, privacy=privacy, formulation=formulation,
            noise_multiplier=s, data_norm=R, random_state=gen,
        )
        assert set(out) == set(stds)
        for key in stds:
            errors[key].append(out[key] - exact[key])
    rows, cols = np.triu_indices(p, 1)
    for key, std in stds.items():
        err = np.asarray(errors[key])
        if key in ("A", "G"):
            # (E + E^T) / 2: the std on the diagonal, 1/sqrt(2) of it off the diagonal.
            assert np.array_equal(err, np.swapaxes(err, -1, -2)), "noise must be symmetric"
            diag = np.diagonal(err, axis1=-2, axis2=-1).ravel()
            pieces = [(diag, std), (err[..., rows, cols].ravel(), std / SQRT2)]
        else:
            pieces = [(err.ravel(), std)]
        for piece, piece_std in pieces:
            assert abs(piece.mean()) < 5 * piece_std / math.sqrt(piece.size)
            # std of the sample std ~ std / sqrt(2N): 6 of those is far in the tail
            assert piece.std() == pytest.approx(piece_std, rel=6 / math.sqrt(2 * piece.size))


def test_mechanism_refuses_unclipped_rows():
    with pytest.raises(ValueError, match="data_norm"):
        noisy_least_squares_statistics(
            np.array([0]), Z=np.array([[3.0, 4.0]]), n_classes=2, privacy="label",
            formulation="ridge", noise_multiplier=1.0, data_norm=1.0, random_state=0,
        )


def test_mechanism_sparse_matches_dense():
    rng = np.random.default_rng(3)
    Z = rng.uniform(size=(20, 4)) * (rng.uniform(size=(20, 4)) < 0.5) / 2.0
    codes = rng.integers(3, size=20)
    kw = dict(n_classes=3, privacy="full", formulation="weighted", noise_multiplier=0.0,
              data_norm=1.0, random_state=0)
    dense = noisy_least_squares_statistics(codes, Z=Z, **kw)
    sparse = noisy_least_squares_statistics(codes, Z=sp.csr_matrix(Z), **kw)
    exact = _exact_statistics(Z, codes, 3)
    for key in dense:
        np.testing.assert_allclose(dense[key], exact[key], atol=1e-12)
        np.testing.assert_allclose(sparse[key], exact[key], atol=1e-12)


@pytest.mark.parametrize("p", [6, 40])  # 40: on the thread pool
def test_class_grams_match_direct_computation(p, monkeypatch):
    rng = np.random.default_rng(11)
    Z = rng.normal(size=(300, p))
    codes = rng.choice([0, 1, 3], size=300)  # class 2 is empty
    exact = _exact_statistics(Z, codes, 4)
    with threadpool_limits(limits=1, user_api="blas"):
        serial, serial_b, _ = _statistics._class_statistics(Z, codes, 4)
    monkeypatch.setattr(_statistics, "_n_blas_threads", lambda: 3)
    dense, dense_b, largest = _statistics._class_statistics(Z, codes, 4)
    sparse, sparse_b, sparse_largest = _statistics._class_statistics(sp.csr_matrix(Z), codes, 4)
    np.testing.assert_allclose(dense, exact["A"], atol=1e-12)
    np.testing.assert_allclose(sparse, exact["A"], atol=1e-12)
    np.testing.assert_allclose(dense, serial, rtol=1e-14, atol=1e-14)
    assert np.array_equal(dense[2], np.zeros((p, p)))
    assert np.array_equal(dense, np.swapaxes(dense, 1, 2))
    # The class sums read from the gathered rows add them in the order of Z, as the
    # sparse one-hot product does: the same bits, whatever the thread count.
    np.testing.assert_allclose(dense_b, exact["b"], atol=1e-12)
    np.testing.assert_array_equal(dense_b, _statistics._class_sums(Z, codes, 4))
    np.testing.assert_array_equal(dense_b, serial_b)
    np.testing.assert_array_equal(sparse_b, _statistics._class_sums(Z, codes, 4))
    assert largest == pytest.approx(np.max(np.sum(Z**2, axis=1)), rel=1e-14)
    assert sparse_largest == pytest.approx(largest, rel=1e-14)


@pytest.mark.parametrize("formulation", ["weighted", "ridge"])
@pytest.mark.parametrize("sparse", [False, True])
def test_every_path_refuses_unclipped_rows(formulation, sparse):
    # The bound is checked on every row, also where the weighted formulation reads the
    # norms from the rows it gathers class by class (the long row is in class 2).
    Z = np.full((6, 2), 0.5)
    Z[4] = [3.0, 4.0]
    kw = dict(n_classes=3, privacy="label", formulation=formulation, noise_multiplier=1.0,
              data_norm=1.0, random_state=0)
    codes = np.array([0, 1, 0, 1, 2, 0])
    with pytest.raises(ValueError, match="data_norm"):
        noisy_least_squares_statistics(codes, Z=sp.csr_matrix(Z) if sparse else Z, **kw)
    Z[4] = [0.6, 0.8]  # norm exactly 1: accepted
    noisy_least_squares_statistics(codes, Z=sp.csr_matrix(Z) if sparse else Z, **kw)


def test_design_from_the_plans_row_norms():
    # The plan's row norms (one pass over X) give the design and the bound that
    # computing them again would.
    rng = np.random.default_rng(14)
    X = rng.normal(size=(60, 5)) * rng.uniform(0.1, 3.0, size=(60, 1))
    for data in (X, sp.csr_matrix(X)):
        design = clipped_design(data, 1.5, intercept=True, scale=0.5, norms=row_norms(data))
        again = clipped_design(data, 1.5, intercept=True, scale=0.5)
        np.testing.assert_array_equal(*(d.toarray() if sp.issparse(d) else d
                                        for d in (design, again)))
    norms = row_norms(X)
    assert plan_row_bound(X, "auto", privacy="label", norms=norms) == plan_row_bound(
        X, "auto", privacy="label")
    clf = DPLeastSquaresClassifier(classes=[0, 1])
    _, plan = clf._plan_fit(X, np.array([0, 1]), None)
    np.testing.assert_array_equal(plan["row_norms"], norms)


def test_threaded_class_solves_equal_serial(monkeypatch):
    # The per-class solves on a thread pool give the serial result, class by class.
    rng = np.random.default_rng(12)
    K, p = 7, 40
    A = rng.normal(size=(K, p, p))
    A = (A + np.swapaxes(A, 1, 2)) / 2 + np.linspace(-3.0, 30.0, K)[:, None, None] * np.eye(p)
    b = rng.normal(size=(p, K))
    B = rng.normal(size=(p, p))
    base = B @ B.T + 50.0 * np.eye(p)
    with threadpool_limits(limits=1, user_api="blas"):
        assert _statistics._n_blas_threads() == 1
        serial = _least_squares._solve_weighted(A.copy(), b, base)
    monkeypatch.setattr(_statistics, "_n_blas_threads", lambda: 3)
    threaded = _least_squares._solve_weighted(A.copy(), b, base)
    np.testing.assert_allclose(threaded, serial, rtol=1e-12, atol=1e-14)
    expected = np.stack([
        np.linalg.solve(project_psd(A[j]) + base, b[:, j]) for j in range(K)
    ])
    np.testing.assert_allclose(threaded, expected, rtol=1e-9, atol=1e-12)


def test_dense_design_is_clip_rows_then_scaling():
    # The one-pass dense design equals clip_rows followed by the 1/sqrt(2) scaling, bit
    # for bit, and the sparse design to rounding.
    rng = np.random.default_rng(13)
    X = rng.normal(size=(50, 4)) * rng.uniform(0.1, 3.0, size=(50, 1))
    clf = DPLeastSquaresClassifier(classes=[0, 1])
    expected = np.hstack([clip_rows(X, 2.0), np.full((50, 1), 2.0)]) * (1.0 / SQRT2)
    np.testing.assert_array_equal(clf._design(X, 2.0), expected)
    np.testing.assert_allclose(clf._design(sp.csr_matrix(X), 2.0).toarray(), expected,
                               rtol=1e-14)


# ----------------------------------------------------------------------------- accounting


def _profile(epsilon, mu):
    """The Gaussian's exact delta(epsilon) (Balle and Wang 2018, Thm. 8), from scipy."""
    return norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)


@pytest.mark.parametrize(
    "privacy, formulation, m, m_example",
    [("label", "weighted", 2, None), ("full", "weighted", 4, 3), ("label", "ridge", 1, None),
     ("full", "ridge", 2, 2)],
)
def test_gaussian_mu_and_noise_multiplier(privacy, formulation, m, m_example):
    X, y = make_classification(200, 5, n_informative=3, n_classes=3, random_state=0)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    clf = DPLeastSquaresClassifier(
        epsilon=2.0, delta=1e-6, privacy=privacy, formulation=formulation,
        data_norm=5.0, classes=[0, 1, 2], random_state=0, accountant=acc,
    ).fit(X, y)
    params = clf.mechanism_params_
    s, mu, rho = params["noise_multiplier"], params["gaussian_mu"], params["rho"]
    # Label change, in noise stds squared: label weighted 2/s^2, label ridge 1/s^2; full
    # weighted 0 + 2 + 2 = 4/s^2 (G does not move, A and b move by sqrt(2) times their
    # add/remove sensitivity); full ridge 0 + 2 = 2/s^2: one Gaussian of mu = sqrt(m) / s.
    assert mu == pytest.approx(math.sqrt(m) / s, rel=1e-12)
    assert rho == pytest.approx(mu**2 / 2, rel=1e-12)
    # The exact profile (Balle and Wang 2018), here from scipy: delta(2) at the bound.
    assert _profile(2.0, mu) <= 1e-6 * (1 + 1e-9)
    assert _profile(2.0, mu) == pytest.approx(1e-6, rel=1e-6)
    # The zCDP conversion it replaces needs more noise for the same budget.
    assert zcdp_to_approx_dp(rho, 1e-6) > 2.0
    assert (clf.epsilon_, clf.delta_) == (2.0, 1e-6)
    assert (acc.total().epsilon, acc.total().delta) == (clf.epsilon_, clf.delta_)
    assert clf.privacy_spend_.rho == pytest.approx(rho)
    sensitivities = least_squares_sensitivities(privacy, formulation, 5.0)
    assert params["sensitivities"] == sensitivities
    assert params["noise_scales"] == {key: s * value for key, value in sensitivities.items()}
    example = {}
    if privacy == "full":
        # Add/remove (Mehta et al.'s accounting of the same noise): 3/(2 s^2) weighted,
        # 2/(2 s^2) ridge, reported as example_epsilon_ at delta.
        assert params["label_sensitivities"] == least_squares_label_sensitivities(
            privacy, formulation, 5.0)
        assert params["example_gaussian_mu"] == pytest.approx(math.sqrt(m_example) / s, rel=1e-12)
        assert params["example_rho"] == pytest.approx(m_example / (2 * s**2), rel=1e-12)
        assert _profile(clf.example_epsilon_, params["example_gaussian_mu"]) <= 1e-6 * (1 + 1e-9)
        assert _profile(clf.example_epsilon_ * (1 - 1e-6), params["example_gaussian_mu"]) > 1e-6
        assert clf.example_delta_ == 1e-6
        example = {"example_epsilon": clf.example_epsilon_, "example_delta": 1e-6}
    else:
        assert not hasattr(clf, "example_epsilon_")
    # The resolved ridge penalty is post-processing (alpha="auto" reads the released or
    # public Gramian), recorded in mechanism_params_ but not part of the spend.
    assert params["alpha"] == clf.alpha_
    released = {key: value for key, value in params.items() if key != "alpha"}
    assert clf.privacy_spend_.params == {"privacy": privacy, "formulation": formulation,
                                         **released, **example}


@pytest.mark.parametrize("formulation", ["weighted", "ridge"])
def test_full_dp_noise_on_the_label_statistics_is_label_dps(formulation):
    # At the same label budget, full DP puts label DP's noise on A_j, b_j and X^T Y
    # (what a label change moves) and noises G besides: s_full = sqrt(2) s_label.
    X, y = make_classification(200, 5, random_state=0)
    kw = dict(epsilon=1.0, formulation=formulation, data_norm=10.0, classes=[0, 1],
              random_state=0)
    label = DPLeastSquaresClassifier(privacy="label", **kw).fit(X, y).mechanism_params_
    full = DPLeastSquaresClassifier(privacy="full", **kw).fit(X, y).mechanism_params_
    assert full["noise_multiplier"] / label["noise_multiplier"] == pytest.approx(SQRT2)
    for key in label["noise_scales"]:
        assert full["noise_scales"][key] == pytest.approx(label["noise_scales"][key])
    assert full["noise_scales"]["G"] == pytest.approx(full["noise_multiplier"] * 100.0)


def test_accountant_is_charged():
    X, y = make_classification(100, 4, random_state=0)
    acc = BudgetAccountant(epsilon=3.0, delta=1e-4)
    DPLeastSquaresClassifier(epsilon=1.0, delta=1e-5, classes=[0, 1], accountant=acc,
                             random_state=0).fit(X, y)
    assert acc.total().epsilon == pytest.approx(1.0)
    assert acc.total().delta == pytest.approx(1e-5)


# ----------------------------------------------------------------------------- agreement


def _breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X) / 6.0  # a fixed scale; some rows get clipped
    return X, y


@pytest.mark.parametrize("privacy", ["label", "full"])
@pytest.mark.parametrize("formulation", ["weighted", "ridge"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_huge_epsilon_agrees_with_nonprivate(privacy, formulation, fit_intercept):
    X, y = _breast_cancer()
    R, alpha, gram_weight = 1.0, 1.0, 0.5
    clf = DPLeastSquaresClassifier(
        epsilon=1e9, privacy=privacy, formulation=formulation, alpha=alpha,
        gram_weight=gram_weight, data_norm=R, fit_intercept=fit_intercept,
        classes=[0, 1], random_state=0,
    ).fit(X, y)
    scores = _nonprivate_scores(X, y, X, n_classes=2, formulation=formulation,
                                gram_weight=gram_weight, alpha=alpha, R=R,
                                fit_intercept=fit_intercept)
    expected = np.argmax(scores, axis=1)
    assert np.mean(clf.predict(X) == expected) >= 0.99
    assert clf.score(X, y) > 0.9
    np.testing.assert_allclose(clf.decision_function(X), scores[:, 1] - scores[:, 0],
                               atol=1e-3)


def test_huge_epsilon_multiclass_agrees():
    X, y = make_classification(3000, 10, n_informative=6, n_classes=5, random_state=0)
    X = X / 8.0
    clf = DPLeastSquaresClassifier(epsilon=1e9, formulation="weighted", data_norm=1.0,
                                   classes=range(5), random_state=0).fit(X, y)
    scores = _nonprivate_scores(X, y, X, n_classes=5, formulation="weighted", gram_weight=1.0,
                                alpha=1.0, R=1.0, fit_intercept=True)
    assert np.mean(clf.predict(X) == np.argmax(scores, axis=1)) >= 0.99
    assert clf.coef_.shape == (5, 10) and clf.intercept_.shape == (5,)


@pytest.mark.parametrize("alpha", [0.1, 30.0])
def test_alpha_is_ridges_alpha(alpha):
    # The "ridge" formulation at a huge epsilon is scikit-learn's Ridge(alpha) on the
    # one-hot targets (rows inside the bound, the largest row norm, rather than "auto",
    # which clips the longest 1%; no intercept: the design is X itself). The Gaussian noise
    # at epsilon = 1e9 still has std ~1e-4 on X^T Y (sums of order 100).
    X, y = make_classification(300, 5, n_informative=5, n_redundant=0, n_classes=3,
                               random_state=0)
    clf = DPLeastSquaresClassifier(epsilon=1e9, formulation="ridge", alpha=alpha,
                                   data_norm=np.linalg.norm(X, axis=1).max(),
                                   fit_intercept=False, classes=[0, 1, 2],
                                   random_state=0).fit(X, y)
    ridge = Ridge(alpha=alpha, fit_intercept=False).fit(X, np.eye(3)[y])
    np.testing.assert_allclose(clf.coef_, ridge.coef_, rtol=1e-4)


def test_small_epsilon_is_noisy_and_seeded():
    X, y = make_classification(500, 5, random_state=0)
    kw = dict(epsilon=0.1, classes=[0, 1])
    a = DPLeastSquaresClassifier(random_state=0, **kw).fit(X, y)
    b = DPLeastSquaresClassifier(random_state=0, **kw).fit(X, y)
    c = DPLeastSquaresClassifier(random_state=1, **kw).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.allclose(a.coef_, c.coef_)


def test_sparse_input_matches_dense():
    X, y = make_classification(300, 6, random_state=0)
    X[np.abs(X) < 0.8] = 0.0
    kw = dict(epsilon=1.0, classes=[0, 1], random_state=0, data_norm=3.0)
    for formulation in ("weighted", "ridge"):
        dense = DPLeastSquaresClassifier(formulation=formulation, **kw).fit(X, y)
        sparse = DPLeastSquaresClassifier(formulation=formulation, **kw).fit(
            sp.csr_matrix(X), y)
        np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)),
                                   dense.decision_function(X), rtol=1e-8, atol=1e-10)


def test_intercept_column_inside_norm_bound():
    # A constant feature scaled with the rows: z = [x, R]/sqrt(2) has norm <= R, so
    # the released statistics at s = 0 equal those of that design.
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    clf = DPLeastSquaresClassifier(epsilon=1e9, classes=[0, 1])
    Z = clf._design(X, 1.0)
    assert np.linalg.norm(Z, axis=1).max() <= 1.0 + 1e-12
    np.testing.assert_allclose(Z, [[0.6 / SQRT2, 0.8 / SQRT2, 1 / SQRT2],
                                   [0.3 / SQRT2, 0.4 / SQRT2, 1 / SQRT2],
                                   [0.0, 0.0, 1 / SQRT2]])


def test_clipping_is_not_data_dependent():
    # Rows inside the bound are left alone whatever the other rows are.
    X = np.array([[0.3, 0.4], [30.0, 40.0]])
    clf = DPLeastSquaresClassifier(fit_intercept=False, classes=[0, 1])
    np.testing.assert_allclose(clf._design(X, 1.0), [[0.3, 0.4], [0.6, 0.8]])
    np.testing.assert_allclose(clf._design(X[:1], 1.0), [[0.3, 0.4]])


# ----------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    "params, match",
    [
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"delta": -1e-5}, "delta"),
        ({"data_norm": 0.0}, "data_norm"),
        ({"data_norm": -1.0}, "data_norm"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"alpha": 0.0}, "alpha"),
        ({"gram_weight": -1.0}, "gram_weight"),
        ({"privacy": "feature"}, "privacy"),
        ({"formulation": "lasso"}, "formulation"),
    ],
)
def test_bad_parameters(params, match):
    X, y = make_classification(50, 3, n_informative=2, n_redundant=0, random_state=0)
    clf = DPLeastSquaresClassifier(classes=[0, 1], **params)
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)
    assert not hasattr(clf, "coef_")


def test_n_features_mismatch_at_predict():
    X, y = make_classification(50, 4, random_state=0)
    clf = DPLeastSquaresClassifier(classes=[0, 1], random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])


def test_classes_none_warns_leak():
    X, y = make_classification(50, 4, random_state=0)
    with pytest.warns(PrivacyLeakWarning):
        DPLeastSquaresClassifier(random_state=0).fit(X, y)


