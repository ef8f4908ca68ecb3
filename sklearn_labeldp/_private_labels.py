"""The single place where a fit reads its true labels."""

import numbers
import warnings

import numpy as np
from sklearn.exceptions import DataConversionWarning

from .utils import check_positive, is_dask, sealed

# Relative slack when comparing a per-example spend with the budget, so that
# e.g. ``eps_p + (eps - eps_p)`` is not refused for a rounding error.
_RTOL = 1e-9


def check_real_labels(y, n_samples=None):
    """Real-valued labels as a 1-d float64 array: the validation of the door's real form.

    Only the format is checked (what a mechanism needs to run at all), before
    any budget is charged, as for class labels: a configuration error costs
    nothing. The error messages name no label value.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Real labels: numbers (bool and complex are refused), finite, one per
        example; a column vector of shape (n_samples, 1) is flattened.
    n_samples : int, default=None
        The number of rows of ``X``, when known.

    Returns
    -------
    ndarray of shape (n_samples,), float64
        A new array, never a view of ``y``.

    Raises
    ------
    ValueError, TypeError
        With a message naming the problem.
    """
    if y is None:
        raise ValueError("y must be an array of real labels; got None.")
    array = np.asarray(y)
    if array.dtype.kind == "c":
        raise ValueError("Complex data not supported: y must hold real labels.")
    if array.dtype.kind not in "iuf" or array.dtype.kind == "b":
        if array.dtype == object and all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) for v in array.ravel()
        ):
            array = array.astype(np.float64)
        else:
            raise TypeError(
                "y must hold real numbers (int or float) for a regressor; got dtype "
                f"{array.dtype}. Encode categories as classes and use a classifier."
            )
    if array.ndim == 2 and array.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected; it is read as "
            "a 1d array of shape (n_samples,).",
            DataConversionWarning,
            stacklevel=4,
        )
        array = array[:, 0]
    if array.ndim != 1:
        raise ValueError(
            f"y must be 1-d, one real label per example; got shape {array.shape}."
        )
    if n_samples is not None and array.shape[0] != n_samples:
        raise ValueError(
            f"y has {array.shape[0]} labels but X has {n_samples} rows; give one label per row."
        )
    if array.shape[0] == 0:
        raise ValueError("y is empty: a fit needs at least one label.")
    array = np.array(array, dtype=np.float64, copy=True)
    if not np.isfinite(array).all():
        raise ValueError("y must be finite: it holds NaN or infinite labels.")
    return array


class PrivateLabels:
    """Holds the encoded true labels of one fit and hands them only to mechanisms.

    The labels are not exposed as an attribute: the only way to read them is
    :meth:`release`, which passes a subset of them straight to a DP mechanism
    and returns the mechanism's output.

    Every release is accounted per example. A release states the epsilon
    ``privacy_cost`` it spends on each example it reads (the mechanism must be
    ``privacy_cost``-label-DP with respect to the label of any one of those
    examples, and must not read the others). The spends of the releases that
    touch an example add up (sequential composition); releases on disjoint,
    label-independent index sets do not add (parallel composition). So the
    whole fit is ``epsilon``-label-DP when, for every example, the sum of the
    costs of the releases that read it stays within ``epsilon``, the planned
    total that the accountant was charged with. :meth:`release` checks exactly
    that and raises instead of releasing when a release would exceed it.

    A release without ``privacy_cost`` costs the whole budget: such a label
    can go through a mechanism only once, the rule of a pure parallel
    composition (e.g. LP-MST's stages).

    Real-valued labels (regression) enter through :meth:`real_valued`, which
    validates them (:func:`check_real_labels`); their ``n_classes`` is None.

    Parameters
    ----------
    codes : ndarray or dask array of shape (n_samples,)
        Label codes in ``[0, n_classes)``. A dask array stays lazy: a
        mechanism receives it (or a lazy selection of it) and reduces it where
        its blocks live.
    n_classes : int or None
        None for labels that are not codes (real values, or raw labels).
    epsilon : float
        The planned label-DP epsilon of the whole fit: what the accountant was
        charged with.
    """

    def __init__(self, codes, n_classes, epsilon):
        epsilon = check_positive(epsilon, "epsilon")
        self.__codes = codes if is_dask(codes) else np.asarray(codes)
        self.n_classes = n_classes
        self.n_samples = self.__codes.shape[0]
        self.epsilon = epsilon
        self._spent = np.zeros(self.n_samples, dtype=np.float64)

    @classmethod
    def real_valued(cls, y, epsilon):
        """The door's real-valued form: validated real labels of a regression fit.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Real labels, checked by :func:`check_real_labels` (finite, 1-d).
        epsilon : float
            The planned label-DP epsilon of the whole fit.

        Returns
        -------
        PrivateLabels
            With ``n_classes=None``; mechanisms receive float64 labels.

        Examples
        --------
        >>> from sklearn_labeldp._private_labels import PrivateLabels
        >>> from sklearn_labeldp.mechanisms import laplace_label
        >>> labels = PrivateLabels.real_valued([0.5, 2.0], epsilon=1e6)
        >>> labels.release(laplace_label, [0, 1], epsilon=1e6, label_range=(0, 1),
        ...                random_state=0).round(3)
        array([0.5, 1. ])
        """
        return cls(check_real_labels(y), None, epsilon)

    @property
    def spent(self):
        """Epsilon spent so far on each example (public: it does not depend on labels).

        Returns
        -------
        ndarray of shape (n_samples,)
            A copy.
        """
        return self._spent.copy()

    def release(self, mechanism, indices, *, privacy_cost=None, failure=None, **kwargs):
        """Apply ``mechanism(labels[indices], **kwargs)`` and return its output only.

        The mechanism runs sealed (:func:`~sklearn_labeldp.utils.sealed`): its
        warnings, printed output (Python's and file descriptors 1 and 2), log
        records and exception text never reach the caller, since their
        occurrence or content may depend on the labels. An exception becomes
        a :class:`~sklearn_labeldp.exceptions.ReleaseError` with the fixed
        message ``failure``.

        Parameters
        ----------
        mechanism : callable
            A DP mechanism taking the label codes as first argument, e.g.
            :func:`sklearn_labeldp.mechanisms.rr_with_prior`.
        indices : array-like of int
            Examples whose labels are released. A repeated index is read twice
            and costs twice.
        privacy_cost : float, default=None
            Epsilon this release spends on each example of ``indices``: the
            mechanism's label-DP epsilon. ``None`` spends the whole budget
            (each such label goes through a mechanism once and through nothing
            else). A number must be at least the ``epsilon`` keyword given to
            the mechanism, if any.
        failure : str, default=None
            Fixed, label-free message of the error raised when the mechanism
            fails; ``None`` names the mechanism.
        **kwargs
            Passed to ``mechanism`` (prior, epsilon, random_state, ...).

        Raises
        ------
        RuntimeError
            When the release would take some example past the budget (e.g. a
            label released twice without accounting); nothing is released then.
        ReleaseError
            When the mechanism raised (after the charge; see its documentation).
        """
        indices = np.asarray(indices, dtype=np.intp)
        cost = self.epsilon
        if privacy_cost is not None:
            cost = check_positive(privacy_cost, "privacy_cost")
            mechanism_epsilon = kwargs.get("epsilon")
            if mechanism_epsilon is not None and float(mechanism_epsilon) > cost * (1 + _RTOL):
                raise ValueError(
                    f"the mechanism runs with epsilon={mechanism_epsilon} but the release "
                    f"declares a privacy_cost of only {cost}."
                )
        spent = self._spent.copy()
        np.add.at(spent, indices, cost)
        if indices.size and spent[indices].max() > self.epsilon * (1 + _RTOL):
            raise RuntimeError(
                "a label was released twice or beyond the planned budget: this release "
                f"would spend up to {spent[indices].max():.6g} on one example, more than "
                f"the budget {self.epsilon:.6g} (each release that reads a label must be "
                "accounted, or the recorded privacy spend would be wrong)."
            )
        self._spent = spent
        codes = self.__codes
        if not (is_dask(codes) and np.array_equal(indices, np.arange(self.n_samples))):
            codes = codes[indices]  # every row of a dask array: the array itself, no new graph
        return sealed(mechanism, codes, failure=failure, **kwargs)
