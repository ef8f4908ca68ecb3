"""The single place where a fit reads its true labels."""

import numpy as np

__all__ = ["PrivateLabels"]


class PrivateLabels:
    """Holds the encoded true labels of one fit and hands them only to mechanisms.

    The labels are not exposed as an attribute: the only way to read them is
    :meth:`release`, which passes a subset of them straight to a DP mechanism
    and returns the mechanism's output. Each example may be released once, so
    the estimator's spend is a parallel composition over the released subsets
    and a second, unaccounted release raises instead of leaking.

    Parameters
    ----------
    codes : ndarray of shape (n_samples,)
        Label codes in ``[0, n_classes)``.
    n_classes : int
    """

    def __init__(self, codes, n_classes):
        self.__codes = np.asarray(codes)
        self.n_classes = n_classes
        self.n_samples = self.__codes.shape[0]
        self._released = np.zeros(self.n_samples, dtype=bool)

    def release(self, mechanism, indices, **kwargs):
        """Apply ``mechanism(labels[indices], **kwargs)`` and return its output.

        Parameters
        ----------
        mechanism : callable
            A DP mechanism taking the label codes as first argument, e.g.
            :func:`sklearn_labeldp.mechanisms.rr_with_prior`.
        indices : array-like of int
            Examples whose labels are released; none may have been released before.
        **kwargs
            Passed to ``mechanism`` (prior, epsilon, random_state, ...).
        """
        indices = np.asarray(indices, dtype=np.intp)
        if self._released[indices].any() or np.unique(indices).size != indices.size:
            raise RuntimeError(
                "a label was released twice; each example's label may go through a "
                "mechanism once, or the recorded privacy spend would be wrong."
            )
        self._released[indices] = True
        return mechanism(self.__codes[indices], **kwargs)
