"""Losses of private ERM and how one example's terms change between neighbours.

A loss is a function ``l(m)`` of the margin ``m = y f.z`` (``y`` in ``{-1,
+1}``, ``||z|| <= 1``) with ``|l'| <= 1`` and ``0 <= l'' <= c``: the
conditions of objective and output perturbation (Chaudhuri, Monteleoni and
Sarwate 2011). :func:`neighbour_bounds` gives the constants of their privacy
proofs for the substitution of a whole example and for a label change.
"""

import numpy as np
from scipy.special import expit, log_expit


class LogisticLoss:
    """``l(m) = log(1 + exp(-m))``, with ``c = 1/4``.

    ``y l'(y m) = sigmoid(m) - [y = 1]``: flipping a label changes the
    per-example gradient ``y l'(y f.z) z`` by exactly ``z`` (norm <= 1, not
    2), and ``l''(m) = sigmoid(m) sigmoid(-m)`` is even, so a flip leaves the
    loss Hessian unchanged (see :func:`neighbour_bounds`).

    Attributes
    ----------
    c : float
        ``sup l'' = 1/4``; also the fixed curvature bound of DP-FC (Mehta et
        al. 2023).
    even_curvature : bool
        ``l''(m) = l''(-m)``.
    newton : bool
        Smooth with ``l'' > 0``: the exact minimiser may use Newton's method.
    label_gradient_sensitivity : float
        ``sup_m |l'(m) + l'(-m)|``.
    """

    c = 0.25
    even_curvature = True
    newton = True
    label_gradient_sensitivity = 1.0

    def value(self, m):
        return -log_expit(m)

    def derivative(self, m):
        return -expit(-m)

    def second_derivative(self, m):
        return expit(m) * expit(-m)


class HuberHingeLoss:
    """Huber hinge of width ``h`` (Chaudhuri et al. 2011, eq. 7), with ``c = 1 / (2h)``.

    ``0`` for ``m > 1 + h``, ``(1 + h - m)^2 / (4h)`` for ``|1 - m| <= h`` and
    ``1 - m`` for ``m < 1 - h``.

    Parameters
    ----------
    width : float
        ``h`` > 0.

    Attributes
    ----------
    c : float
        ``sup l'' = 1 / (2h)``.
    even_curvature : bool
        False: ``l''`` is symmetric about ``m = 1``, not about 0.
    label_gradient_sensitivity : float
        2: ``l'(m) + l'(-m)`` reaches -2 (both -1 at ``m = 0`` when ``h <= 1``),
        so label DP gains nothing on the gradient.
    """

    even_curvature = False
    label_gradient_sensitivity = 2.0

    def __init__(self, width):
        self.width = float(width)
        self.c = 1.0 / (2.0 * self.width)

    def value(self, m):
        h = self.width
        return np.where(m > 1 + h, 0.0, np.where(m < 1 - h, 1.0 - m, (1 + h - m) ** 2 / (4 * h)))

    def derivative(self, m):
        h = self.width
        return -np.clip((1 + h - m) / (2 * h), 0.0, 1.0)

    def second_derivative(self, m):
        return np.where(np.abs(1.0 - m) <= self.width, self.c, 0.0)


def logistic_probabilities(scores):
    """Logistic regression's class probabilities from its decision scores.

    The sigmoid of a 1-d score (two classes), or of each one-vs-rest score
    normalised over the classes.
    """
    p = expit(scores)
    if scores.ndim == 1:
        return np.column_stack([1.0 - p, p])
    return p / p.sum(axis=1, keepdims=True)


def neighbour_bounds(loss, privacy):
    """``(g, r)``: how much one example's terms of the objective can change between neighbours.

    ``g`` bounds the norm of the change of the per-example gradient ``y
    l'(y f.z) z`` and ``r`` the rank of the change of the loss Hessian ``l''(y
    f.z) z z^T`` (eigenvalues in ``[-c, c]``), with ``||z|| <= 1``:

    - ``privacy="full"`` (substitution of ``(z, y)``): ``g = 2``, ``r = 2``
      (Chaudhuri et al. 2011);
    - ``privacy="label"`` (``z`` fixed, ``y -> -y`` in each affected binary
      problem): ``g = sup_m |l'(m) + l'(-m)|``, which is 1 for the logistic loss
      (its residual ``sigmoid(m) - [y = 1]`` moves by exactly 1) and 2 for the
      Huber hinge; ``r = 1`` (``(l''(-m) - l''(m)) z z^T``), or 0 when ``l''`` is
      even (logistic).

    Parameters
    ----------
    loss : LogisticLoss or HuberHingeLoss
    privacy : {"label", "full"}

    Returns
    -------
    gradient_sensitivity : float
        ``g``.
    hessian_rank : {0, 1, 2}
        ``r``.
    """
    if privacy == "full":
        return 2.0, 2
    return loss.label_gradient_sensitivity, (0 if loss.even_curvature else 1)
