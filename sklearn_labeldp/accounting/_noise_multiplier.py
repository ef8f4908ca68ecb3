"""One entry point for DP-SGD's noise: :func:`get_noise_multiplier`, by neighbouring relation.

Opacus calibrates every accountant through one function
(``opacus.accountants.utils.get_noise_multiplier``); this is the library's
equivalent over its relations. Each row of :data:`RELATIONS` names a
neighbouring relation and the calibration that meets a budget under it; the
per-relation functions stay public for their extra return values.
"""

from collections.abc import Callable
from dataclasses import dataclass

from ..utils import check_option
from ._label_change import subsampled_gaussian_label_noise_multiplier
from ._subsampled import (
    SUBSAMPLED_GAUSSIAN_METHODS,
    calibrate_dp_sgd,
    subsampled_gaussian_noise_multiplier,
)

__all__ = ["RELATIONS", "get_noise_multiplier"]


@dataclass(frozen=True)
class Relation:
    """A neighbouring relation and the noise multiplier that meets a budget under it.

    ``calibrate(epsilon, delta, sample_rate, steps, method)`` returns the
    smallest noise multiplier found within ``(epsilon, delta)``; ``methods``
    are the accountants it offers.
    """

    calibrate: Callable
    methods: tuple


def _replace_one(epsilon, delta, sample_rate, steps, method):
    return subsampled_gaussian_label_noise_multiplier(epsilon, sample_rate, steps, delta)


RELATIONS = {
    # One label changed, accounted directly (the library's DP-SGD; Zhu, Dong and
    # Wang 2022's replace-one pair): privacy loss distributions only.
    "replace_one": Relation(calibrate=_replace_one, methods=("pld",)),
    # One example added or removed (Abadi et al. 2016).
    "add_remove": Relation(
        calibrate=lambda epsilon, delta, q, steps, method: subsampled_gaussian_noise_multiplier(
            epsilon, q, steps, delta, method=method),
        methods=SUBSAMPLED_GAUSSIAN_METHODS,
    ),
    # One label changed, through group privacy of add/remove (Dwork and Roth 2014).
    "group_privacy": Relation(
        calibrate=lambda epsilon, delta, q, steps, method: calibrate_dp_sgd(
            epsilon, delta, q, steps, method=method)[0],
        methods=SUBSAMPLED_GAUSSIAN_METHODS,
    ),
}


def get_noise_multiplier(target_epsilon, target_delta, sample_rate, steps, *,
                         relation="replace_one", method="pld"):
    """The smallest noise multiplier of a DP-SGD run within ``(target_epsilon, target_delta)``.

    The library's single calibration entry point for the Poisson-subsampled
    Gaussian (Abadi et al. 2016), over its neighbouring relations (as Opacus's
    ``get_noise_multiplier`` is over its accountants): ``"replace_one"``, a
    label change accounted directly by privacy loss distributions (what
    :class:`~sklearn_labeldp.nn.DPSGDClassifier` charges), ``"add_remove"``,
    the usual example-level guarantee, and ``"group_privacy"``, a label change
    as two add/remove steps.

    Parameters
    ----------
    target_epsilon : float
        > 0.
    target_delta : float
        In (0, 1).
    sample_rate : float
        Poisson sampling probability ``q`` in ``(0, 1]``.
    steps : int
        Number of noisy steps, >= 1.
    relation : {"replace_one", "add_remove", "group_privacy"}, default="replace_one"
    method : {"pld", "rdp"}, default="pld"
        dp-accounting's accountant; ``"replace_one"`` offers ``"pld"`` only.

    Returns
    -------
    float
        Noise std over the clipping norm: the run is within the target under
        ``relation``.

    Raises
    ------
    ValueError
        An unknown relation or method, an argument out of range, or no
        multiplier reaching the target.

    Examples
    --------
    >>> from sklearn_labeldp.accounting import get_noise_multiplier
    >>> round(get_noise_multiplier(2.0, 1e-5, 0.01, 10_000), 2)
    4.0
    >>> round(get_noise_multiplier(1.0, 1e-5, 0.01, 10_000, relation="add_remove"), 2)
    3.81
    """
    row = RELATIONS[check_option(relation, "relation", tuple(RELATIONS))]
    method = check_option(method, "method", row.methods)
    return row.calibrate(target_epsilon, target_delta, sample_rate, steps, method)
