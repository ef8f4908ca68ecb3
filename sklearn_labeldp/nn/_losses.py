"""Losses for the three kinds of privatised targets."""

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["SoftCrossEntropyLoss", "soft_cross_entropy"]


def soft_cross_entropy(logits, targets):
    """Cross-entropy between soft targets and the softmax of ``logits``.

    ``-sum_k t_k log softmax(z)_k``, averaged over the batch. The log-softmax
    is computed directly (never ``log(softmax)``), which stays finite for any
    logits. For one-hot targets it equals the ordinary cross-entropy.

    Parameters
    ----------
    logits : torch.Tensor of shape (batch, n_classes)
    targets : torch.Tensor of shape (batch, n_classes)
        Rows on the probability simplex (e.g. ALIBI's posteriors).

    Returns
    -------
    loss : torch.Tensor
        A scalar.

    References
    ----------
    .. [1] Malek, M., Mironov, I., Prasad, K., Shilov, I. and Tramer, F.
       "Antipodes of label differential privacy: PATE and ALIBI", NeurIPS 2021.

    Examples
    --------
    >>> import torch
    >>> from sklearn_labeldp.nn import soft_cross_entropy
    >>> logits = torch.tensor([[0.0, 0.0]])
    >>> round(float(soft_cross_entropy(logits, torch.tensor([[0.5, 0.5]]))), 4)
    0.6931
    """
    return -(targets * F.log_softmax(logits, dim=-1)).sum(dim=-1).mean()


class SoftCrossEntropyLoss(nn.Module):
    """Module form of :func:`soft_cross_entropy`, the criterion of ``fit_soft``."""

    def forward(self, logits, targets):
        if not torch.is_floating_point(targets):
            # Integer labels (e.g. from a user's own iterator) are one-hot rows.
            return F.cross_entropy(logits, targets)
        return soft_cross_entropy(logits, targets)
