"""skorch callbacks for label-DP training."""

import math

import torch
from skorch.callbacks import Callback

from ..utils import check_nonnegative
from ._data import check_soft_targets

__all__ = ["TargetRefresh", "WarmupLinearDecay"]


class TargetRefresh(Callback):
    """Replace the soft training targets by ``refresh(proba)`` after each epoch.

    After every epoch but the last, the net's current class probabilities on
    the training inputs (``net.predict_proba``, evaluation mode) are passed to
    ``refresh``; what it returns becomes the targets of the next epoch. This is
    ALIBI's per-epoch posterior update: the randomized labels were drawn once,
    before training, and ``refresh`` only post-processes them with the model's
    prior, so the callback neither sees the true labels nor draws anything
    random.

    :meth:`LabelDPNetClassifier.fit_soft <sklearn_labeldp.nn.LabelDPNetClassifier.fit_soft>`
    installs it under the name ``"target_refresh"`` for the duration of the fit
    when its ``refresh`` argument is given.

    Parameters
    ----------
    refresh : callable
        ``refresh(proba) -> new_targets``; ``proba`` and ``new_targets`` have
        shape (n_samples, n_classes) and rows on the probability simplex.

    Attributes
    ----------
    n_refreshes_ : int
        How many times ``refresh`` was called in the current fit.

    References
    ----------
    .. [1] Malek, M., Mironov, I., Prasad, K., Shilov, I. and Tramer, F.
       "Antipodes of label differential privacy: PATE and ALIBI", NeurIPS 2021.
    """

    def __init__(self, refresh):
        self.refresh = refresh

    def initialize(self):
        if not callable(self.refresh):
            raise TypeError(f"refresh must be callable; got {self.refresh!r}.")
        self.n_refreshes_ = 0
        self.epochs_ = 0
        return self

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        self.n_refreshes_ = 0
        self.epochs_ = 0

    def on_epoch_end(self, net, dataset_train=None, dataset_valid=None, **kwargs):
        self.epochs_ += 1
        if self.epochs_ >= net.max_epochs:
            return  # nothing trains on targets after the last epoch
        current = dataset_train.y
        proba = net.predict_proba(dataset_train)
        new = check_soft_targets(
            self.refresh(proba), len(proba), current.shape[1], name="the output of refresh"
        )
        if isinstance(current, torch.Tensor):
            new = torch.from_numpy(new).to(device=current.device, dtype=current.dtype)
        dataset_train.y = new
        self.n_refreshes_ += 1


class WarmupLinearDecay(Callback):
    """Learning rate ramped linearly from 0 to its peak, then linearly down to 0.

    The schedule of the image experiments of Ghazi et al. (2021, appendix): the rate grows over the
    first ``warmup_fraction`` of the fit's training steps (mini-batches) and
    decays to 0 at its last step. The peak is the net's ``lr``. Every fit
    (each LP-MST stage, warm-started or not) runs the whole schedule again,
    like the paper's stages, each trained "separately".

    Parameters
    ----------
    warmup_fraction : float, default=0.15
        Share of the training steps spent ramping up, in [0, 1).

    Attributes
    ----------
    n_steps_ : int
        Training steps of the current fit.
    step_ : int
        Steps taken so far in the current fit.

    References
    ----------
    .. [1] Ghazi, B., Golowich, N., Kumar, R., Manurangsi, P. and Zhang, C.
       "Deep learning with label differential privacy", NeurIPS 2021,
       appendix (training details: peak 0.02 after 15% of the iterations).

    Examples
    --------
    >>> from sklearn_labeldp.nn import WarmupLinearDecay
    >>> schedule = WarmupLinearDecay(warmup_fraction=0.25)
    >>> [round(schedule.factor(step, 8), 3) for step in range(8)]
    [0.5, 1.0, 0.833, 0.667, 0.5, 0.333, 0.167, 0.0]
    """

    def __init__(self, warmup_fraction=0.15):
        self.warmup_fraction = warmup_fraction

    def initialize(self):
        check_nonnegative(self.warmup_fraction, "warmup_fraction", upper=1.0, include_upper=False)
        self.n_steps_ = self.step_ = 0
        return self

    def factor(self, step, n_steps):
        """The multiple of the peak rate used at training step ``step`` (0-based)."""
        warmup = int(round(self.warmup_fraction * n_steps))
        if step < warmup:
            return (step + 1) / warmup
        return (n_steps - 1 - step) / max(n_steps - warmup, 1)

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        # Batches per epoch from the size alone (building the iterator would copy X);
        # a final batch merged into the previous one only shortens the tail.
        n = len(X)
        batch_size = n if net.batch_size == -1 else net.batch_size
        self.n_steps_, self.step_ = math.ceil(n / batch_size) * net.max_epochs, 0

    def on_batch_begin(self, net, batch=None, training=False, **kwargs):
        if not training:
            return
        rate = net.lr * self.factor(min(self.step_, self.n_steps_ - 1), self.n_steps_)
        for group in net.optimizer_.param_groups:
            group["lr"] = rate
        self.step_ += 1
