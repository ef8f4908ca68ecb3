"""The public functions' argument checks: one module, one message per mistake."""

import math

import numpy as np
import pytest

from sklearn_labeldp.accounting import (
    PrivacyBudget,
    approx_dp_to_zcdp,
    gaussian_rho,
    zcdp_to_approx_dp,
)
from sklearn_labeldp.audit import clopper_pearson_lower, event_privacy_audit
from sklearn_labeldp.mechanisms import (
    gnmax_sigma,
    gnmax_spend,
    laplace_label,
    lnmax_spend,
    noisy_label_histogram,
    randomized_response,
    rr_on_bins,
    staircase_label,
    unbiased_randomizer,
)
from sklearn_labeldp.priors import apply_temperature, cluster_assignment
from sklearn_labeldp.regression import NoisyLabelRegressor
from sklearn_labeldp.utils import (
    check_finite,
    check_int,
    check_known_rows,
    check_label_range,
    check_nonnegative,
    check_option,
    check_positive,
    check_unit_interval,
    check_value_prior,
)
from sklearn_labeldp.utils._validation import check_codes, check_label_codes


def _message(call):
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    return type(info.value), str(info.value)


def test_a_bad_delta_gets_one_message_from_every_package():
    # Up to 1f650d0 the PATE spends said "delta must lie in (0, 1)" and the zCDP
    # conversions "delta must lie in the open interval (0, 1)": two checks.
    calls = [
        lambda: gnmax_spend(1.0, 10, 1.5),
        lambda: gnmax_sigma(1.0, 1.5, 10),
        lambda: zcdp_to_approx_dp(0.5, 1.5),
        lambda: approx_dp_to_zcdp(1.0, 1.5),
    ]
    expected = (ValueError, "delta must lie in the open interval (0, 1); got 1.5.")
    assert [_message(call) for call in calls] == [expected] * len(calls)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_a_bad_epsilon_gets_one_message_from_every_package(bad):
    calls = [
        lambda: randomized_response([0], epsilon=bad, n_classes=2),
        lambda: approx_dp_to_zcdp(bad, 1e-5),
        lambda: check_positive(bad, "epsilon"),
    ]
    expected = (ValueError, f"epsilon must be a finite number > 0; got {float(bad)!r}.")
    assert [_message(call) for call in calls] == [expected] * len(calls)


def test_bools_and_non_numbers_are_type_errors():
    for check in (check_positive, check_unit_interval, check_nonnegative, check_finite):
        for bad in (True, "1", None, [1.0]):
            with pytest.raises(TypeError, match="x must be a real number"):
                check(bad, "x")
    for bad in (True, 2.0, "2"):
        with pytest.raises(TypeError, match="n must be an int"):
            check_int(bad, "n", minimum=1)
    with pytest.raises(TypeError, match="sigma must be a real number"):
        gaussian_rho(1.0, True)
    with pytest.raises(TypeError, match="confidence must be a real number"):
        clopper_pearson_lower(1, 2, confidence=True)
    with pytest.raises(TypeError, match="n_queries must be an int"):
        lnmax_spend(0.1, 2.0)
    with pytest.raises(TypeError, match="n_clusters must be an int"):
        cluster_assignment(np.zeros((4, 1)), 2.0)
    with pytest.raises(TypeError, match="temperature must be a real number"):
        apply_temperature([[0.5, 0.5]], "1")


def test_ranges():
    assert check_positive(0, "rho", allow_zero=True) == 0.0
    with pytest.raises(ValueError, match=r"rho must be a finite number >= 0; got -1\.0\."):
        check_positive(-1, "rho", allow_zero=True)
    assert check_nonnegative(math.inf, "epsilon") == math.inf
    with pytest.raises(ValueError, match=r"delta must lie in \[0, 1\.0\]; got 1\.5\."):
        PrivacyBudget(1.0, 1.5)
    for bad in (0.0, 1.0, -0.5, math.nan):
        with pytest.raises(ValueError, match=r"confidence must lie in the open interval"):
            event_privacy_audit([True], [False], confidence=bad)
    with pytest.raises(ValueError, match="threshold must be finite; got inf."):
        check_finite(math.inf, "threshold")
    with pytest.raises(ValueError, match="n_groups must be >= 1; got 0."):
        noisy_label_histogram([0], [0], epsilon=1.0, n_classes=2, n_groups=0)
    with pytest.raises(ValueError, match=r"n_clusters=5 must lie in \[1, n_samples\]"):
        cluster_assignment(np.zeros((4, 1)), 5)
    with pytest.raises(ValueError, match=r"method must be one of \('cks', 'classic'\)"):
        check_option("rdp", "method", ("cks", "classic"))


def test_half_open_ranges():
    assert check_nonnegative(0, "max_shift", upper=1.0, include_upper=False) == 0.0
    assert check_nonnegative(0.5, "max_shift", upper=1.0, include_upper=False) == 0.5
    for bad in (1.0, 1.5, -0.1, math.nan):
        with pytest.raises(ValueError, match=r"max_shift must lie in \[0, 1\.0\); got"):
            check_nonnegative(bad, "max_shift", upper=1.0, include_upper=False)
    with pytest.raises(ValueError, match=r"x must lie in \[0, inf\); got inf\."):
        check_nonnegative(math.inf, "x", include_upper=False)
    with pytest.raises(TypeError, match="max_shift must be a real number"):
        check_nonnegative(False, "max_shift", upper=1.0, include_upper=False)


def test_half_open_unit_interval():
    assert check_unit_interval(1, "sample_rate", include_upper=True) == 1.0
    assert check_unit_interval(0.25, "sample_rate", include_upper=True) == 0.25
    for bad in (0.0, -0.5, 1.5, math.nan, math.inf):
        with pytest.raises(ValueError, match=r"sample_rate must lie in \(0, 1\]; got"):
            check_unit_interval(bad, "sample_rate", include_upper=True)
    with pytest.raises(TypeError, match="sample_rate must be a real number"):
        check_unit_interval(True, "sample_rate", include_upper=True)


def test_value_prior():
    values, probabilities, order = check_value_prior(
        (np.array([3, 0, 1]), [0.2, 0.3, 0.5]), (0, 3))
    np.testing.assert_array_equal(values, [0.0, 1.0, 3.0])
    np.testing.assert_array_equal(probabilities, [0.3, 0.5, 0.2])
    np.testing.assert_array_equal(order, [1, 2, 0])
    assert values.dtype == probabilities.dtype == np.float64
    # Normalised exactly, even when the given sum is 1 only within the tolerance.
    assert check_value_prior(([0.0], [1.0 + 1e-9]), (0, 1))[1].tolist() == [1.0]


@pytest.mark.parametrize(
    ("prior", "error", "match"),
    [
        (0.5, TypeError, r"prior must be a pair \(values, probabilities\)"),
        (([0.0], [1.0], [1.0]), TypeError, "prior must be a pair"),
        (([0.0, 1.0], [1.0]), ValueError, r"nonempty 1-d arrays of the same length; got shapes"),
        (([], []), ValueError, "nonempty 1-d arrays"),
        (([[0.0, 1.0]], [[0.5, 0.5]]), ValueError, "nonempty 1-d arrays"),
        (([0.0, math.nan], [0.5, 0.5]), ValueError, "prior values and probabilities must be fin"),
        (([0.0, 1.0], [math.inf, 0.5]), ValueError, "must be finite"),
        (([0.0, 1.0], [1.5, -0.5]), ValueError, "prior probabilities must be nonnegative"),
        (([0.0, 1.0], [0.5, 0.6]), ValueError, r"must sum to 1; they sum to 1\.1\."),
        (([0.0, 9.0], [0.5, 0.5]), ValueError,
         r"must lie in label_range \[0\.0, 5\.0\]; they span \[0\.0, 9\.0\]\.$"),
        (([-1.0, 1.0], [0.5, 0.5]), ValueError, "prior values must lie in label_range"),
        (([1.0, 1.0], [0.5, 0.5]), ValueError, "prior values must be distinct"),
    ],
)
def test_value_prior_refuses(prior, error, match):
    with pytest.raises(error, match=match):
        check_value_prior(prior, (0.0, 5.0))


def test_value_prior_checks_its_label_range():
    with pytest.raises(ValueError, match="label_range must have low < high"):
        check_value_prior(([0.0], [1.0]), (1.0, 0.0))
    with pytest.raises(TypeError, match=r"label_range\[1\] must be a real number"):
        check_value_prior(([0.0], [1.0]), (0.0, None))


def test_label_range():
    assert check_label_range((0, 30)) == (0.0, 30.0)
    assert check_label_range([-1.5, np.float32(2.0)]) == (-1.5, 2.0)
    assert check_label_range(np.array([0, 1])) == (0.0, 1.0)
    assert all(type(bound) is float for bound in check_label_range((np.int64(0), 1)))
    for wrong_length in (None, 5, (), (1.0,), (0.0, 1.0, 2.0), np.zeros(3)):
        with pytest.raises(ValueError, match=r"label_range must be a pair \(low, high\)"):
            check_label_range(wrong_length)
    for bad, which in (((math.nan, 1.0), 0), ((0.0, math.inf), 1), ((-math.inf, 0.0), 0)):
        with pytest.raises(ValueError, match=rf"label_range\[{which}\] must be finite"):
            check_label_range(bad)
    for bad in ((1.0, 1.0), (2.0, 1.0)):
        with pytest.raises(ValueError, match="label_range must have low < high"):
            check_label_range(bad)
    for bad, which in ((("a", 1.0), 0), ((0.0, "1"), 1), ((0.0, None), 1), ((False, True), 0),
                       (np.zeros((2, 2)), 0)):
        with pytest.raises(TypeError, match=rf"label_range\[{which}\] must be a real number"):
            check_label_range(bad)


def test_a_bad_label_range_gets_one_message_from_every_package():
    prior = ([0.0, 1.0], [0.5, 0.5])
    calls = [
        lambda: check_label_range((1.0, 0.0)),
        lambda: laplace_label([0.5], epsilon=1.0, label_range=(1.0, 0.0)),
        lambda: staircase_label([0.5], epsilon=1.0, label_range=(1.0, 0.0)),
        lambda: rr_on_bins([0.5], epsilon=1.0, prior=prior, label_range=(1.0, 0.0)),
        lambda: unbiased_randomizer([0.5], epsilon=1.0, prior=prior, label_range=(1.0, 0.0)),
        lambda: NoisyLabelRegressor(label_range=(1.0, 0.0), random_state=0).fit(
            np.zeros((4, 1)), np.zeros(4)),
    ]
    expected = (ValueError, "label_range must have low < high; got (1.0, 0.0).")
    assert [_message(call) for call in calls] == [expected] * len(calls)


def test_codes():
    assert check_label_codes(np.array([0.0, 2.0]), 3).dtype == np.int64
    assert check_label_codes([], 3).shape == (0,)
    with pytest.raises(TypeError, match="encode labels first"):
        check_label_codes([0.5], 3)
    with pytest.raises(TypeError, match="groups must hold integer group codes; got dtype"):
        check_codes(["a"], 3, name="groups", what="group")
    with pytest.raises(ValueError, match=r"group codes in groups must lie in \[0, 2\]"):
        check_codes([3], 3, name="groups", what="group")
    with pytest.raises(ValueError, match="1-d array of label codes"):
        check_label_codes([[0]], 3)


def test_known_rows():
    da = pytest.importorskip("dask.array")
    y = da.arange(10, chunks=5)
    check_known_rows(y, "y")
    with pytest.raises(ValueError, match=r"^y has unknown chunk sizes; call compute_chunk_sizes"):
        check_known_rows(y[y > 3], "y")
