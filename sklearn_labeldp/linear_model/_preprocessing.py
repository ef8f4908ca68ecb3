"""Row clipping shared by the private linear models.

The sensitivity analyses of the linear models assume every feature row has
L2 norm at most a public bound. Rows above it are scaled down to the bound;
rows inside it are left alone. Nothing is rescaled by an amount computed
from the data, which would leak.
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["clip_rows", "clipped_design", "row_clip_factors"]


def clip_rows(X, max_norm):
    """Scale every row of ``X`` whose L2 norm exceeds ``max_norm`` down to it.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    max_norm : float
        Public bound, > 0.

    Returns
    -------
    {ndarray, sparse matrix} of shape (n_samples, n_features)
        A new array (float64); rows with norm <= ``max_norm`` are unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.linear_model._preprocessing import clip_rows
    >>> clip_rows(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0)
    array([[0.6, 0.8],
           [0.3, 0.4]])
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        return sp.diags(row_clip_factors(X, max_norm)) @ X
    X = np.array(X, dtype=np.float64, copy=True)
    X *= row_clip_factors(X, max_norm)[:, None]
    return X


def clipped_design(X, max_norm, *, intercept, scale=1.0):
    """``scale * [clip_rows(X, max_norm), max_norm]``: the design of a linear model.

    The constant column (the intercept feature, ``max_norm`` so that it is on
    the scale of the clipped rows) is appended only when ``intercept``. Dense
    input with an intercept is clipped straight into the design: one pass and
    one copy of ``X``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    max_norm : float
        Public bound, > 0.
    intercept : bool
    scale : float, default=1.0

    Returns
    -------
    {ndarray, sparse matrix} of shape (n_samples, n_features + intercept)
    """
    if sp.issparse(X) or not intercept:
        Z = clip_rows(X, max_norm)
        if intercept:
            ones = sp.csr_matrix(np.full((Z.shape[0], 1), max_norm))
            Z = sp.hstack([Z, ones], format="csr")
        return Z if scale == 1.0 else Z * scale
    X = np.asarray(X, dtype=np.float64)
    factors = row_clip_factors(X, max_norm)
    design = np.empty((X.shape[0], X.shape[1] + 1))
    np.multiply(X, factors[:, None], out=design[:, :-1])
    design[:, :-1] *= scale
    design[:, -1] = max_norm * scale
    return design


def row_clip_factors(X, max_norm):
    """The factor :func:`clip_rows` multiplies each row of ``X`` by.

    1 for rows with L2 norm <= ``max_norm``, ``max_norm / norm`` for the others.
    Each factor reads its own row only (no data-dependent rescaling).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features), float64
    max_norm : float
        Public bound, > 0.

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    if not (np.isfinite(max_norm) and max_norm > 0):
        raise ValueError(f"the clipping norm must be a finite number > 0; got {max_norm!r}.")
    if sp.issparse(X):
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    else:
        norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    return _scale(norms, max_norm)


def _scale(norms, max_norm):
    """1 for rows within the bound, ``max_norm / norm`` for the others."""
    scale = np.ones_like(norms)
    over = norms > max_norm
    scale[over] = max_norm / norms[over]
    return scale
