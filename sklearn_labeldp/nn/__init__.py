"""Deep networks with label differential privacy (PyTorch + skorch).

This subpackage is imported only explicitly (``import sklearn_labeldp.nn``)
and needs the ``torch`` extra; the rest of :mod:`sklearn_labeldp` never imports
torch. :class:`LabelDPNetClassifier` is a scikit-learn classifier that the
label-DP meta-estimators wrap: it trains one network on hard labels
(``fit``), soft labels (``fit_soft``, with ALIBI's per-epoch refresh through
:class:`TargetRefresh`), bit vectors (``fit_bits``), or partly labeled data
with FixMatch (``fit_semi``, whose default image augmentations are
:func:`weak_augment` and :func:`strong_augment`).
"""

try:
    import skorch  # noqa: F401
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "sklearn_labeldp.nn needs PyTorch and skorch, which are not installed; "
        'install them with: pip install "sklearn-labeldp[torch]"'
    ) from exc

from ._augment import strong_augment, weak_augment
from ._callbacks import TargetRefresh, WarmupLinearDecay
from ._dp_sgd import DPSGDClassifier
from ._losses import SoftCrossEntropyLoss, soft_cross_entropy
from ._net import LabelDPNetClassifier
from ._networks import MLP, FashionCNN, PreActBlock, PreActResNet18

__all__ = [
    "DPSGDClassifier",
    "FashionCNN",
    "LabelDPNetClassifier",
    "MLP",
    "PreActBlock",
    "PreActResNet18",
    "SoftCrossEntropyLoss",
    "TargetRefresh",
    "WarmupLinearDecay",
    "soft_cross_entropy",
    "strong_augment",
    "weak_augment",
]
