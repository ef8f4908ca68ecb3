"""Which of scikit-learn's estimator checks an estimator fails by design, and why.

Each estimator declares its own in ``_expected_failed_checks()`` (a dict of
check name to reason); :func:`expected_failed_checks` reads it, and the shared
reasons live here, so that users (``check_estimator``) and the library's own
tests (``parametrize_with_checks``) share one list.
"""

__all__ = ["expected_failed_checks"]

NOISE_PER_EXAMPLE = (
    "the mechanism draws one noisy label per example: an example repeated twice "
    "gets two independent noisy labels, one with weight 2 gets a single one"
)
NO_WEIGHTS = (
    "the meta-estimator forwards sample_weight to its base estimator, whose fit accepts none"
)
SAMPLE_WEIGHT_EQUIVALENCE = (
    "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weight_equivalence_on_sparse_data",
)
SAMPLE_WEIGHT_CHECKS = (
    *SAMPLE_WEIGHT_EQUIVALENCE,
    "check_sample_weights_list",
    "check_sample_weights_not_an_array",
    "check_sample_weights_pandas_series",
    "check_sample_weights_shape",
    "check_sample_weights_not_overwritten",
    "check_all_zero_sample_weights_error",
    "check_classifiers_one_label_sample_weights",
)


def meta_estimator_failures(base_takes_weights):
    """The expected failures of a meta-estimator whose mechanism noises each example.

    Parameters
    ----------
    base_takes_weights : bool
        Whether the base estimator's ``fit`` accepts ``sample_weight``.

    Returns
    -------
    dict
    """
    failures = dict.fromkeys(SAMPLE_WEIGHT_EQUIVALENCE, NOISE_PER_EXAMPLE)
    if not base_takes_weights:
        failures.update(dict.fromkeys(SAMPLE_WEIGHT_CHECKS, NO_WEIGHTS))
    return failures


def expected_failed_checks(estimator):
    """The scikit-learn estimator checks ``estimator`` fails by design, with the reasons.

    The dict that :func:`sklearn.utils.estimator_checks.check_estimator` and
    :func:`~sklearn.utils.estimator_checks.parametrize_with_checks` take as
    ``expected_failed_checks``: e.g. a mechanism that draws one noisy label
    per example cannot treat a weight of 2 as a repeated row. An estimator
    without such checks gives ``{}``.

    Parameters
    ----------
    estimator : estimator instance

    Returns
    -------
    dict
        Check name to the reason it fails.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_labeldp import RRWithPriorClassifier
    >>> from sklearn_labeldp.utils import expected_failed_checks
    >>> failures = expected_failed_checks(RRWithPriorClassifier(LogisticRegression()))
    >>> sorted(failures)[0], failures["check_sample_weight_equivalence_on_dense_data"][:42]
    ('check_sample_weight_equivalence_on_dense_data', 'the mechanism draws one noisy label per ex')
    """
    declared = getattr(estimator, "_expected_failed_checks", None)
    return {} if declared is None else dict(declared())
