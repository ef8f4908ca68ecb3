"""How :class:`~sklearn_labeldp.nn.LabelDPNetClassifier` trains: the epochs and one object per mode.

Every fit of the network (``LabelDPNetClassifier._fit``) runs the epochs of
:func:`train_epochs` and hands it one :class:`Training` object, which decides
what differs between the modes: per-fit state drawn from the fit's seed, wrapping the module for the
length of the training, the training batches, the batch before its forward
pass, and terms added to the loss. The modes are

- :class:`Training`: plain supervised training on hard labels, soft labels
  or bit vectors (the criterion follows the kind of target);
- :class:`TargetRefreshTraining`: ALIBI's soft labels recomputed from the
  model's predictions after every epoch (Malek et al. 2021);
- :class:`MixupTraining`: mixup of every training batch (Zhang et al. 2018);
- :class:`FixMatchTraining`: FixMatch on partly labeled data (Sohn et al. 2020);
- :class:`~sklearn_labeldp.nn._dp_sgd.DPSGDTraining`: DP-SGD's Poisson
  batches, clipped per-example gradients and noisy steps (Abadi et al. 2016).

:func:`combine` joins modes that work together (mixup with any of the first
three) into one and refuses the others. No mode is stored on the network: the
loop passes the object to every step and drops it when the fit ends, so
nothing a mode holds (the unlabeled pool, generators, the caller's refresh
closure) stays reachable from the fitted network.
"""

from contextlib import ExitStack
from functools import partial

import numpy as np
import sklearn
import torch
from sklearn.utils.metadata_routing import process_routing
from skorch.callbacks import Callback
from skorch.dataset import get_len
from skorch.history import History
from skorch.utils import to_tensor
from torch import nn

from ..utils import progress
from ._augment import resolve_image_shape, strong_augment, weak_augment
from ._callbacks import TargetRefresh
from ._data import as_tensor, stage

__all__ = [
    "FixMatchTraining",
    "MixupTraining",
    "TargetRefreshTraining",
    "Training",
    "combine",
    "fixmatch_unlabeled_loss",
    "train_epochs",
]

# The keys of a training step that are not per-batch statistics to record.
_STEP_OUTPUTS = ("loss", "y_pred")


class Training:
    """Plain supervised training, and the interface every training mode implements.

    The training loop calls the hooks of the fit's mode in this order; each
    default does nothing, which is plain training on the targets as given.

    1. :meth:`prepare` once, after the fit's ``classes_``, ``n_outputs_``,
       ``target_kind_`` and ``device_`` are set and before the module is
       (re)initialised;
    2. :meth:`attach` once the module, optimizer and criterion exist and a
       forward pass on two rows of ``X`` has passed (lazy layers are
       materialised);
    3. :meth:`batches` once, for the training batches;
    4. per training step: :meth:`transform_batch`, the forward pass and the
       criterion, then :meth:`add_loss`, then the backward pass;
    5. :meth:`detach` after training, whether it succeeded or not (also after
       a failed :meth:`attach`).

    Class attributes declare which modes may be combined (:func:`combine`):
    ``mixes_examples`` for a mode whose batch mixes several examples, and
    ``per_example_gradients`` for one whose guarantee needs each example's
    gradient to depend on that example alone.
    """

    mixes_examples = False
    per_example_gradients = False
    # A progress bar over the epochs (counts and times only); a mode sets it per fit.
    show_progress = False

    def prepare(self, net, X, seed):
        """Label-free checks on public rows of ``X`` and the state drawn from the fit's ``seed``."""

    def attach(self, net):
        """Install what the mode needs on the initialised ``net`` (undone by :meth:`detach`)."""

    def batches(self, dataset):
        """The training batches of ``dataset``, or None for the network's own iterator."""
        return None

    def transform_batch(self, net, X, y):
        """The training batch ``(X, y)`` that the forward pass and the criterion see."""
        return X, y

    def add_loss(self, net, loss, X, step, **fit_params):
        """The step's loss given the criterion's ``loss`` on the batch ``X``.

        Scalar tensors added to the dict ``step`` are recorded per batch in the
        history under ``train_<key>``, and their mean weighted by the batch
        sizes per epoch.
        """
        return loss

    def detach(self, net):
        """Undo :meth:`attach`; must tolerate an attach that failed or never ran."""


class _Combined(Training):
    """Several modes applied in turn (their order is the order of the hooks)."""

    def __init__(self, modes):
        self.modes = tuple(modes)
        self.mixes_examples = any(mode.mixes_examples for mode in self.modes)
        self.per_example_gradients = any(mode.per_example_gradients for mode in self.modes)
        self.show_progress = any(mode.show_progress for mode in self.modes)

    def prepare(self, net, X, seed):
        for mode in self.modes:
            mode.prepare(net, X, seed)

    def attach(self, net):
        for mode in self.modes:
            mode.attach(net)

    def batches(self, dataset):
        given = [b for b in (mode.batches(dataset) for mode in self.modes) if b is not None]
        if len(given) > 1:
            raise ValueError("at most one training mode may choose the training batches.")
        return given[0] if given else None

    def transform_batch(self, net, X, y):
        for mode in self.modes:
            X, y = mode.transform_batch(net, X, y)
        return X, y

    def add_loss(self, net, loss, X, step, **fit_params):
        for mode in self.modes:
            loss = mode.add_loss(net, loss, X, step, **fit_params)
        return loss

    def detach(self, net):
        # Every mode is detached, in reverse order, even when one of them raises.
        with ExitStack() as stack:
            for mode in self.modes:
                stack.callback(mode.detach, net)


def combine(*modes):
    """One training mode that applies ``modes`` in turn (plain :class:`Training` for none).

    Raises ``ValueError`` for modes that cannot work together: a mode that
    mixes examples (mixup) with one that needs per-example gradients (DP-SGD).
    """
    modes = [mode for mode in modes if mode is not None]
    if any(m.mixes_examples for m in modes) and any(m.per_example_gradients for m in modes):
        raise ValueError(
            "mixup (mixup_alpha > 0) cannot be combined with DP-SGD: mixup mixes examples, so "
            "a per-example gradient would depend on other examples."
        )
    if not modes:
        return Training()
    return modes[0] if len(modes) == 1 else _Combined(modes)


def train_epochs(net, X, y, training, **fit_params):
    """Train the initialised ``net`` for ``max_epochs`` epochs under the mode ``training``.

    skorch's ``partial_fit`` and ``fit_loop``, except that the mode may choose
    the training batches and reaches the network's ``train_step_single`` as
    its ``training_mode`` argument (skorch's ``train_step`` passes its keyword
    arguments on): no state of the mode is stored on the network.
    """
    net.notify("on_train_begin", X=X, y=y)
    try:
        net.check_data(X, y)
        net.check_training_readiness()
        split_params = fit_params
        if sklearn.get_config()["enable_metadata_routing"]:
            # As skorch does: the splitter's metadata, routed from fit's.
            routed = process_routing(net, "fit", **fit_params)
            split_params = routed.get("splitter", {"split": {}})["split"]
        dataset_train, dataset_valid = net.get_split_datasets(X, y, **split_params)
        on_epoch_kwargs = {"dataset_train": dataset_train, "dataset_valid": dataset_valid}
        iterator_train = training.batches(dataset_train)
        if iterator_train is None:
            iterator_train = net.get_iterator(dataset_train, training=True)
        iterator_valid = None
        if dataset_valid is not None:
            iterator_valid = net.get_iterator(dataset_valid, training=False)
        train_step = partial(net.train_step, training_mode=training)
        epochs = progress(range(net.max_epochs), desc=f"{type(net).__name__} epochs",
                          enabled=training.show_progress)
        for _ in epochs:
            net.notify("on_epoch_begin", **on_epoch_kwargs)
            _run_epoch(net, iterator_train, True, "train", train_step, **fit_params)
            _run_epoch(net, iterator_valid, False, "valid", net.validation_step, **fit_params)
            net.notify("on_epoch_end", **on_epoch_kwargs)
    except KeyboardInterrupt:
        pass  # skorch's convention: an interrupted fit keeps what it trained
    net.notify("on_train_end", X=X, y=y)


def batch_size(batch):
    """The number of examples in ``batch``, as skorch's epoch loop counts them.

    ``X`` of an ``(X, y)`` tuple or list, else the batch itself (a dict of
    equally long entries, a tensor). Read from shapes only: no device
    synchronisation.

    Examples
    --------
    >>> import torch
    >>> from sklearn_labeldp.nn._training import batch_size
    >>> batch_size((torch.zeros(4, 3), torch.zeros(4))), batch_size({"x": torch.zeros(5, 2)})
    (4, 5)
    """
    return get_len(batch[0]) if isinstance(batch, (tuple, list)) else get_len(batch)


def _batch_notifier(net, name):
    """``net.notify(name, ...)`` without the callbacks whose hook is skorch's no-op.

    skorch calls every callback's ``on_batch_begin`` and ``on_batch_end`` at
    every batch, though its own callbacks act only per epoch; on a small
    network those empty calls cost a few percent of a step. The network's own
    hook (``on_batch_begin`` opens the history's batch row) and every callback
    that overrides the hook are still called, in skorch's order.
    """
    default = getattr(Callback, name)
    hooks = [getattr(net, name)] + [getattr(callback, name) for _, callback in net.callbacks_
                                    if getattr(type(callback), name, default) is not default]

    def notify(**kwargs):
        for hook in hooks:
            hook(net, **kwargs)

    return notify


def _run_epoch(net, iterator, training, prefix, step_fn, **fit_params):
    """skorch's ``run_single_epoch``, reading the batch losses back once per epoch.

    skorch records ``loss.item()`` after every batch, which waits for the
    accelerator each time; here the losses stay on the device until the epoch
    ends, so the host can queue the next batch while the device computes. The
    history holds the same numbers once the epoch is over (a callback reading
    a batch's loss in ``on_batch_end`` sees it missing). Any other scalar a
    training mode adds to the step (FixMatch's loss terms and mask rate) is
    recorded per batch as ``<prefix>_<key>``, and per epoch as its mean
    weighted like skorch's ``train_loss``.
    """
    if iterator is None:
        return
    if not isinstance(net.history, History):
        net.run_single_epoch(iterator, training, prefix, step_fn, **fit_params)
        return
    rows, losses, sizes = [], [], []
    extras = {}
    batch_begin = _batch_notifier(net, "on_batch_begin")
    batch_end = _batch_notifier(net, "on_batch_end")
    for batch in iterator:
        batch_begin(batch=batch, training=training)
        step = step_fn(batch, **fit_params)
        row = net.history[-1]["batches"][-1]
        sizes.append(batch_size(batch))
        row[prefix + "_batch_size"] = sizes[-1]
        rows.append(row)
        losses.append(step["loss"].detach())
        for name, value in step.items():
            if name not in _STEP_OUTPUTS:
                extras.setdefault(name, []).append(value)
        batch_end(batch=batch, training=training, **step)
    if losses:
        for row, value in zip(rows, torch.stack(losses).tolist(), strict=True):
            row[prefix + "_loss"] = value
    for name, values in extras.items():
        if len(values) == len(rows):
            values = torch.stack(values).tolist()
            for row, value in zip(rows, values, strict=True):
                row[f"{prefix}_{name}"] = value
            net.history.record(f"{prefix}_{name}", np.average(values, weights=sizes).item())
    net.history.record(prefix + "_batch_count", len(rows))


class TargetRefreshTraining(Training):
    """Soft targets replaced by ``refresh(proba)`` after every epoch but the last.

    ALIBI's posterior refresh (Malek et al. 2021): the noisy labels are released
    once, before training, and every epoch's targets are their posterior under
    the model's current prior. The mode installs a
    :class:`~sklearn_labeldp.nn.TargetRefresh` callback named
    ``"target_refresh"`` for the length of the fit and removes it afterwards,
    so the fitted network neither keeps nor pickles the caller's closure.

    Parameters
    ----------
    refresh : callable
        ``refresh(proba) -> new_targets``, pure post-processing of the release.
    """

    def __init__(self, refresh):
        self.refresh = refresh
        self._callback = None

    def attach(self, net):
        self._callback = TargetRefresh(self.refresh).initialize()
        net.callbacks_ = [*net.callbacks_, ("target_refresh", self._callback)]

    def detach(self, net):
        if self._callback is not None:
            net.callbacks_ = [(n, c) for n, c in net.callbacks_ if c is not self._callback]
            self._callback = None


class MixupTraining(Training):
    """Every training batch replaced by a convex combination of itself and a shuffled copy.

    With ``lambda ~ Beta(alpha, alpha)`` drawn per batch from a numpy generator
    seeded from the fit's seed, and the permutation from torch's (seeded)
    generator, inputs and target vectors are mixed alike (Zhang et al. 2018;
    used for label DP by Ghazi et al. 2021): hard labels are one-hot encoded
    first, bits become soft binary cross-entropy targets.

    Parameters
    ----------
    alpha : float > 0
        The Beta distribution's parameter (the network's ``mixup_alpha``).

    Attributes
    ----------
    rng : numpy.random.Generator or None
        Source of the lambdas, set by :meth:`prepare`.
    """

    mixes_examples = True

    def __init__(self, alpha):
        self.alpha = alpha
        self.rng = None

    def prepare(self, net, X, seed):
        self.rng = np.random.default_rng([seed, 1])

    def transform_batch(self, net, X, y):
        if not isinstance(X, torch.Tensor):
            raise TypeError("mixup needs tensor inputs; use mixup_alpha=0 with this dataset.")
        X = to_tensor(X, device=net.device_)
        y = to_tensor(y, device=net.device_)
        if not torch.is_floating_point(y):
            # scatter_ rather than F.one_hot, whose range check waits for the device.
            one_hot = torch.zeros(len(y), net.n_outputs_, dtype=X.dtype, device=y.device)
            y = one_hot.scatter_(1, y.unsqueeze(1), 1.0)
        lam = float(self.rng.beta(self.alpha, self.alpha))
        perm = torch.randperm(len(X), device=X.device)
        return lam * X + (1.0 - lam) * X[perm], lam * y + (1.0 - lam) * y[perm]

    def detach(self, net):
        self.rng = None


def fixmatch_unlabeled_loss(weak_logits, strong_logits, threshold):
    """FixMatch's unlabeled loss and its confidence mask.

    The pseudo-label of a row is the argmax of ``softmax(weak_logits)``; the
    row counts when that probability is at least ``threshold``. The loss is
    the sum over counted rows of the cross-entropy of ``strong_logits``
    against their pseudo-labels, divided by the number of rows (all of them,
    counted or not), as in Sohn et al. (2020), Eq. (4).

    Returns
    -------
    loss : scalar tensor
    mask : float tensor of shape (n,), 1 for the counted rows
    """
    weak_logits = weak_logits.detach()
    confidence, pseudo_labels = torch.softmax(weak_logits, dim=1).max(dim=1)
    mask = (confidence >= threshold).to(strong_logits.dtype)
    per_row = nn.functional.cross_entropy(strong_logits, pseudo_labels, reduction="none")
    return (per_row * mask).mean(), mask


def _check_augmentation(name, function, rows, device):
    """Run ``function`` on ``rows`` and check it keeps their shape, dtype and device."""
    generator = torch.Generator(device=device).manual_seed(0)
    try:
        out = function(rows.clone(), generator)
    except Exception as exc:
        raise ValueError(
            f"{name} failed on {len(rows)} row(s) of X of shape {tuple(rows.shape)} "
            f"with a torch.Generator on {device}: {type(exc).__name__}: {exc}"
        ) from exc
    if (
        not isinstance(out, torch.Tensor)
        or out.shape != rows.shape
        or out.dtype != rows.dtype
        or out.device != rows.device
    ):
        got = (
            f"{type(out).__name__} {tuple(out.shape)} {out.dtype} on {out.device}"
            if isinstance(out, torch.Tensor)
            else type(out).__name__
        )
        raise ValueError(
            f"{name} must return a tensor of the shape, dtype and device of its input "
            f"({tuple(rows.shape)} {rows.dtype} on {rows.device}); got {got}."
        )


class FixMatchTraining(Training):
    """FixMatch (Sohn et al. 2020): labeled batches plus pseudo-labeled unlabeled ones.

    Every labeled batch is weakly augmented; every step also draws
    ``unlabeled_ratio`` times as many unlabeled rows, cycling through the pool
    in a fresh random order each pass, and adds ``unlabeled_weight`` times
    :func:`fixmatch_unlabeled_loss` of their strongly augmented copies against
    the confident pseudo-labels of their weakly augmented ones. Three
    generators, seeded from the fit's seed, draw the orders, the labeled rows'
    augmentations and the unlabeled rows' augmentations, so the labeled stream
    does not depend on the unlabeled one. The step records ``loss_x``,
    ``loss_u`` and ``mask_rate``.

    Parameters
    ----------
    pool : ndarray or tensor of shape (n_unlabeled, ...)
        The unlabeled rows (possibly none).
    threshold, unlabeled_weight, unlabeled_ratio, weak_augment, strong_augment, image_shape
        The network's ``fixmatch_threshold``, ``unlabeled_weight``,
        ``unlabeled_ratio``, ``weak_augment``, ``strong_augment`` and
        ``image_shape``.
    """

    def __init__(
        self,
        pool,
        *,
        threshold,
        unlabeled_weight,
        unlabeled_ratio,
        weak_augment,
        strong_augment,
        image_shape,
    ):
        self.pool = pool
        self.threshold = threshold
        self.unlabeled_weight = unlabeled_weight
        self.unlabeled_ratio = unlabeled_ratio
        self.weak = weak_augment
        self.strong = strong_augment
        self.image_shape = image_shape

    def prepare(self, net, X, seed):
        """Check both augmentations on two rows of ``X`` and seed the unlabeled stream."""
        device = net.device_
        if device is not None:
            self.device = torch.device(device)
        elif isinstance(X, torch.Tensor):
            self.device = X.device
        else:
            self.device = torch.device("cpu")
        if self.weak is None or self.strong is None:
            shape = resolve_image_shape(X.shape[1:], self.image_shape)
            if self.weak is None:
                self.weak = partial(weak_augment, image_shape=shape)
            if self.strong is None:
                self.strong = partial(strong_augment, image_shape=shape)
        rows = as_tensor(X[:2], float32=True).to(self.device)
        _check_augmentation("weak_augment", self.weak, rows, self.device)
        _check_augmentation("strong_augment", self.strong, rows, self.device)
        (self.pool,) = stage([as_tensor(self.pool, float32=True)], device)
        self.n_unlabeled = len(self.pool)
        seeds = np.random.SeedSequence([seed, 2]).generate_state(3, dtype=np.uint64)
        order_seed, labeled_seed, unlabeled_seed = (int(s) for s in seeds)
        self.order_generator = torch.Generator(device=self.pool.device).manual_seed(order_seed)
        self.labeled_generator = torch.Generator(device=self.device).manual_seed(labeled_seed)
        self.unlabeled_generator = torch.Generator(device=self.device).manual_seed(unlabeled_seed)
        self._order = None
        self._position = self.n_unlabeled

    def next_batch(self, size):
        """The next ``size`` unlabeled rows (repeating the pool when ``size`` exceeds it)."""
        parts = []
        while size > 0:
            if self._position == self.n_unlabeled:
                self._order = torch.randperm(
                    self.n_unlabeled, generator=self.order_generator, device=self.pool.device
                )
                self._position = 0
            take = min(size, self.n_unlabeled - self._position)
            parts.append(self._order[self._position : self._position + take])
            self._position += take
            size -= take
        index = parts[0] if len(parts) == 1 else torch.cat(parts)
        return self.pool[index].to(self.device)

    def transform_batch(self, net, X, y):
        if not isinstance(X, torch.Tensor):
            raise TypeError("fit_semi needs tensor batches; got " + type(X).__name__)
        return self.weak(X.to(self.device), self.labeled_generator), y

    def add_loss(self, net, loss, X, step, **fit_params):
        if not self.n_unlabeled:
            return loss
        u = self.next_batch(self.unlabeled_ratio * len(X))
        generator = self.unlabeled_generator
        with torch.no_grad():
            weak_logits = net.infer(self.weak(u, generator), **fit_params)
        strong_logits = net.infer(self.strong(u, generator), **fit_params)
        loss_u, mask = fixmatch_unlabeled_loss(weak_logits, strong_logits, self.threshold)
        step.update(loss_x=loss.detach(), loss_u=loss_u.detach(), mask_rate=mask.mean())
        return loss + self.unlabeled_weight * loss_u

    def detach(self, net):
        # The pool and the generators go with this object; drop them early all the same.
        self.pool = self._order = None
