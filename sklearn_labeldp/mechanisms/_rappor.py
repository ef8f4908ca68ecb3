"""Vector approximation: RAPPOR unary encoding of the label (seed 001)."""

import numpy as np

from ..utils import check_generator
from ._validation import check_epsilon, check_label_codes, check_n_classes

__all__ = ["debias_rappor", "rappor", "rappor_distribution"]


def _rappor_probabilities(epsilon):
    """``(q+, q-)`` written with ``e^(-eps/2)`` so that they never overflow."""
    t = np.exp(-epsilon / 2.0)
    return 1.0 / (1.0 + t), t / (1.0 + t)


def rappor(y, *, epsilon, n_classes, random_state=None):
    """RAPPOR unary encoding: release K independent noisy bits per label.

    Coordinate ``j`` of the output row for label ``y`` is 1 with probability
    ``q+ = e^(eps/2) / (1 + e^(eps/2))`` if ``j == y`` and
    ``q- = 1 / (1 + e^(eps/2))`` otherwise, independently across coordinates
    and examples. Changing ``y`` changes the law of two coordinates, each by a
    likelihood ratio of at most ``e^(eps/2)``: the release is eps-label-DP.

    Exactly ``n_samples * n_classes`` uniforms are drawn whatever the labels.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Integer label codes in ``[0, n_classes)``.
    epsilon : float
        Privacy parameter, finite and > 0.
    n_classes : int
        Number of classes K >= 2.
    random_state : None, int or numpy.random.Generator, default=None
        ``None`` draws fresh operating-system entropy.

    Returns
    -------
    ndarray of shape (n_samples, n_classes), uint8
        The bit vectors ``Z``, entries 0 or 1.

    See Also
    --------
    rappor_distribution : the exact per-coordinate law.
    debias_rappor : turn scores fitted on ``Z`` into class probabilities.

    References
    ----------
    .. [1] U. Erlingsson, V. Pihur, A. Korolova. RAPPOR: randomized aggregatable
       privacy-preserving ordinal response. CCS 2014.
    .. [2] P. Zhao et al. Enhancing learning with label differential privacy by
       vector approximation. ICLR 2024 (seed 001), eqs. (14) and (17).

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import rappor
    >>> rappor([0, 2, 1], epsilon=80.0, n_classes=3, random_state=0)
    array([[1, 0, 0],
           [0, 0, 1],
           [0, 1, 0]], dtype=uint8)
    """
    epsilon = check_epsilon(epsilon)
    n_classes = check_n_classes(n_classes)
    y = check_label_codes(y, n_classes)
    rng = check_generator(random_state)
    q_plus, q_minus = _rappor_probabilities(epsilon)
    u = rng.random((y.shape[0], n_classes))
    rows = np.arange(y.shape[0])
    on_label = u[rows, y]
    z = (u < q_minus).view(np.uint8)
    z[rows, y] = on_label < q_plus
    return z


def rappor_distribution(*, epsilon, n_classes):
    """Exact per-coordinate law of :func:`rappor`.

    Parameters
    ----------
    epsilon : float
    n_classes : int

    Returns
    -------
    ndarray of shape (n_classes, n_classes)
        Entry ``[y, j]`` is ``P(Z_j = 1 | y)``; coordinates are independent,
        so the probability of a whole vector is the product over ``j``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.mechanisms import rappor_distribution
    >>> P = rappor_distribution(epsilon=2 * np.log(3), n_classes=3)
    >>> np.round(P, 3)
    array([[0.75, 0.25, 0.25],
           [0.25, 0.75, 0.25],
           [0.25, 0.25, 0.75]])
    """
    epsilon = check_epsilon(epsilon)
    n_classes = check_n_classes(n_classes)
    q_plus, q_minus = _rappor_probabilities(epsilon)
    dist = np.full((n_classes, n_classes), q_minus)
    np.fill_diagonal(dist, q_plus)
    return dist


def debias_rappor(scores, *, epsilon):
    """Turn estimates of ``E[Z | x]`` into class probabilities.

    Since ``E[Z_j | x] = q- + (q+ - q-) eta_j(x)``, the estimate is
    ``eta_j = (f_j - q-) / (q+ - q-)``, clipped to ``[0, 1]`` and renormalised
    per row. A row whose entries all clip to 0 carries no information about the
    class and is returned as the uniform distribution.

    Parameters
    ----------
    scores : array-like of shape (n_samples, n_classes)
        Finite scores ``f_j(x)``, e.g. a regressor's predictions fitted on the
        output of :func:`rappor`.
    epsilon : float
        The epsilon the bits were released with.

    Returns
    -------
    ndarray of shape (n_samples, n_classes), float64
        Rows on the probability simplex.

    References
    ----------
    .. [1] P. Zhao et al. Enhancing learning with label differential privacy by
       vector approximation. ICLR 2024 (seed 001), eq. (17).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_labeldp.mechanisms import debias_rappor, rappor_distribution
    >>> P = rappor_distribution(epsilon=1.0, n_classes=3)
    >>> debias_rappor(P, epsilon=1.0).round(12)
    array([[1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]])
    >>> debias_rappor([[0.0, 0.0, 0.0]], epsilon=1.0)
    array([[0.33333333, 0.33333333, 0.33333333]])
    """
    epsilon = check_epsilon(epsilon)
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[1] < 2:
        raise ValueError(
            f"scores must be a 2-d array (n_samples, n_classes >= 2); got shape {scores.shape}."
        )
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite.")
    _, q_minus = _rappor_probabilities(epsilon)
    # q+ - q- = (e^(eps/2) - 1) / (e^(eps/2) + 1) = tanh(eps/4), exact for tiny eps.
    eta = np.clip((scores - q_minus) / np.tanh(epsilon / 4.0), 0.0, 1.0)
    total = eta.sum(axis=1, keepdims=True)
    empty = total[:, 0] == 0
    eta[empty] = 1.0
    total[empty] = scores.shape[1]
    eta /= total
    return eta
