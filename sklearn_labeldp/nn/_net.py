"""A skorch classifier that learns hard labels, soft labels or bit vectors.

It also learns from partly labeled data with FixMatch (``fit_semi``).
"""

import inspect
import warnings
from collections.abc import Mapping
from contextlib import contextmanager
from functools import partial
from numbers import Integral, Real
from textwrap import shorten

import numpy as np
import torch
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import Interval, Options, validate_parameter_constraints
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _num_samples,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)
from skorch import NeuralNet
from skorch.dataset import Dataset, get_len, unpack_data
from skorch.history import History
from skorch.utils import is_dataset, to_tensor
from torch import nn
from torch.utils.data import DataLoader

from ._augment import check_image_shape, resolve_image_shape, strong_augment, weak_augment
from ._callbacks import TargetRefresh, check_soft_targets
from ._losses import SoftCrossEntropyLoss

__all__ = ["LabelDPNetClassifier"]

# One criterion per kind of target; all take raw logits.
_LOSSES = {
    "hard": nn.CrossEntropyLoss,  # also accepts the probability rows mixup makes
    "soft": SoftCrossEntropyLoss,
    "bits": nn.BCEWithLogitsLoss,
}
# Training data up to this size is copied to the accelerator once per fit
# instead of once per batch; larger data stays in host memory.
_STAGE_LIMIT_BYTES = 2 * 1024**3
_FITTED_ATTRIBUTES = (
    "classes_",
    "n_outputs_",
    "target_kind_",
    "device_",
    "n_features_in_",
    "feature_names_in_",
)


def resolve_device(device):
    """The torch device a ``device`` parameter means: ``"auto"`` picks CUDA when present."""
    if isinstance(device, str) and device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def _check_device_available(device):
    """Raise ``ValueError`` unless ``device`` names a torch device this machine has.

    ``"auto"`` and None always pass. Anything else must parse as a
    :class:`torch.device` on which an empty tensor can be allocated (a CUDA
    device also needs its index among the visible GPUs), so that a network
    configured for an absent accelerator fails before any work, not mid-fit.
    """
    resolved = resolve_device(device)
    if resolved is None:
        return
    n_gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    try:
        parsed = torch.device(resolved)
        # Allocation, not only parsing: it fails for a device type this build or machine lacks.
        torch.empty(0, device=parsed)
    except Exception as exc:  # torch raises RuntimeError, AssertionError, NotImplementedError...
        reason = shorten(str(exc), 200) or type(exc).__name__
    else:
        reason = None
        if parsed.type == "cuda" and (parsed.index or 0) >= n_gpus:
            reason = f"this machine has {n_gpus} CUDA device(s)"
    if reason is not None:
        available = ", ".join(repr(name) for name in ["cpu", *(f"cuda:{i}" for i in range(n_gpus))])
        raise ValueError(
            f"device must be 'auto', None or a torch device available here ({available}); "
            f"got {device!r}, which is unavailable: {reason}."
        )


def _draw_seed(random_state):
    """One torch seed in [0, 2**63) for a fit, from a validated ``random_state``.

    None draws it from the operating system's entropy; a ``RandomState`` or
    ``Generator`` draws it from its bit generator (which advances), so a
    128-bit-seeded MT19937 or PCG64 stream gives a 63-bit seed, not a narrowed one.
    """
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int64).max, dtype=np.int64))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int64).max))
    return int(random_state)


@contextmanager
def _seeded(seed, device):
    """Seed torch for one fit without disturbing the caller's global RNG state."""
    on_cuda = device is not None and torch.device(device).type == "cuda"
    devices = list(range(torch.cuda.device_count())) if on_cuda else []
    with torch.random.fork_rng(devices=devices):
        if on_cuda:
            torch.manual_seed(seed)  # seeds the CPU and every (forked) CUDA generator
        else:
            # Only the CPU generator: the accelerators' states are not forked.
            torch.default_generator.manual_seed(seed)
        yield


def _as_tensor(data, float32=False):
    if isinstance(data, torch.Tensor):
        if float32 and data.dtype != torch.float32:
            data = data.to(torch.float32)
        return data
    data = np.asarray(data)
    if float32 and data.dtype != np.float32:
        data = data.astype(np.float32)
    if not data.flags.writeable or not data.flags.c_contiguous:
        data = np.ascontiguousarray(data).copy()  # torch.from_numpy needs writable memory
    return torch.from_numpy(data)


def _accepts_keyword(factory, name):
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is p.VAR_KEYWORD for p in parameters)


class _ArrayDataset(torch.utils.data.Dataset):
    """Inputs and targets held as whole tensors, so batches are slices, not stacks."""

    def __init__(self, X, y=None):
        self.X = X
        self.y = y

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        # For a user-configured DataLoader; the default path slices whole batches.
        return self.X[i], (0 if self.y is None else self.y[i])


class _ArrayBatches:
    """Mini-batches of an :class:`_ArrayDataset` by tensor indexing.

    A DataLoader indexes and collates sample by sample; on in-memory arrays
    that Python loop costs more than a small network's forward pass. Targets are
    read at the start of every epoch, so a refreshed ``dataset.y`` takes effect
    in the next one.
    """

    def __init__(self, dataset, batch_size, shuffle):
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = shuffle

    def _stops(self, n):
        stops = list(range(self.batch_size, n, self.batch_size)) + [n]
        if self.shuffle and len(stops) > 1 and n - stops[-2] == 1:
            # A training batch of one sample breaks BatchNorm; fold it into the previous.
            del stops[-2]
        return stops

    def __len__(self):
        return len(self._stops(len(self.dataset)))

    def __iter__(self):
        X, y = self.dataset.X, self.dataset.y
        n = len(X)
        order = torch.randperm(n, device=X.device) if self.shuffle else None
        start = 0
        for stop in self._stops(n):
            index = slice(start, stop) if order is None else order[start:stop]
            yield X[index], (None if y is None else y[index])
            start = stop


_FIXMATCH_KEYS = ("loss_x", "loss_u", "mask_rate")


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


class _FixMatchStream:
    """The unlabeled rows of one :meth:`LabelDPNetClassifier.fit_semi` and its generators.

    Unlabeled batches cycle through the pool, each pass in a fresh random
    order. Three generators, seeded from the fit's seed, draw the orders, the
    labeled rows' augmentations and the unlabeled rows' augmentations, so the
    labeled stream does not depend on the unlabeled one.
    """

    def __init__(self, pool, *, weak, strong, seed, device):
        self.pool = pool
        self.n_unlabeled = len(pool)
        self.weak = weak
        self.strong = strong
        self.device = device
        seeds = np.random.SeedSequence([seed, 2]).generate_state(3, dtype=np.uint64)
        order_seed, labeled_seed, unlabeled_seed = (int(s) for s in seeds)
        self.order_generator = torch.Generator(device=pool.device).manual_seed(order_seed)
        self.labeled_generator = torch.Generator(device=device).manual_seed(labeled_seed)
        self.unlabeled_generator = torch.Generator(device=device).manual_seed(unlabeled_seed)
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


class LabelDPNetClassifier(ClassifierMixin, NeuralNet):
    """A PyTorch network trained on hard labels, soft labels or bit vectors.

    A :class:`skorch.NeuralNet` that the label-DP meta-estimators wrap like any
    scikit-learn classifier. One network learns whichever target the privacy
    mechanism released:

    - :meth:`fit` ``(X, y)``: hard labels (randomized response, RRWithPrior),
      cross-entropy; ``classes_`` are the sorted distinct labels;
    - :meth:`fit_soft` ``(X, targets, refresh=None)``: rows on the probability
      simplex (ALIBI's posteriors), soft cross-entropy
      :func:`~sklearn_labeldp.nn.soft_cross_entropy`; ``refresh`` recomputes the
      targets from the current predictions between epochs through the
      :class:`~sklearn_labeldp.nn.TargetRefresh` callback;
    - :meth:`fit_bits` ``(X, bits)``: K {0, 1} columns (vector approximation),
      one sigmoid output each and binary cross-entropy; :meth:`predict_proba`
      then returns the K sigmoids, whose rows need not sum to one;
    - :meth:`fit_semi` ``(X, y)``: hard labels with ``-1`` for unlabeled rows,
      FixMatch semi-supervised training [5]_ (PATE's student in PATE-FM [1]_);
      ``classes_`` are the sorted labels other than ``-1``.

    The number of outputs is passed to the module as ``module__n_outputs`` at
    fit time (number of classes or bit columns) unless set by the user or the
    module does not take that argument.

    Parameters
    ----------
    module : torch.nn.Module class or instance
        The network; it takes float32 inputs of shape (batch, n_features) and
        returns logits of shape (batch, n_outputs), like
        :class:`~sklearn_labeldp.nn.FashionCNN`.
    max_epochs : int >= 1, default=10
        Passes over the training data per fit.
    batch_size : int >= 1 or -1, default=128
        Mini-batch size for training and prediction (-1: the whole data).
    lr : float >= 0, default=0.01
        Learning rate (0 leaves the weights as initialised).
    optimizer : torch.optim.Optimizer class, default=torch.optim.SGD
        Plain SGD, skorch's and the papers' default; its hyperparameters are
        ``optimizer__*`` (e.g. ``optimizer__momentum=0.9``,
        ``optimizer__weight_decay=5e-4``). Adam is a common alternative for the
        small CNN (then use ``lr=1e-3``).
    mixup_alpha : float >= 0, default=0.0
        When positive, each training batch is replaced by a convex combination
        of itself and a shuffled copy, inputs and target vectors alike, with
        weight ``lambda ~ Beta(mixup_alpha, mixup_alpha)`` drawn per batch
        (mixup; hard labels are one-hot encoded first, bits become soft BCE
        targets). Prediction is unaffected. 0 disables it.
    fixmatch_threshold : float in [0, 1], default=0.95
        :meth:`fit_semi` only: FixMatch's confidence threshold tau. An
        unlabeled row contributes to the loss when the predicted probability
        of its most likely class, on its weakly augmented copy, is at least
        tau (0: every row; 1: only rows predicted with probability 1).
    unlabeled_weight : float >= 0, default=1.0
        :meth:`fit_semi` only: FixMatch's lambda_u, the weight of the
        unlabeled loss (0 leaves the labeled loss alone to drive training).
    unlabeled_ratio : int >= 1, default=7
        :meth:`fit_semi` only: FixMatch's mu, the number of unlabeled rows per
        labeled row in a step (unlabeled batch size = mu times the labeled
        batch's size).
    weak_augment : callable or None, default=None
        :meth:`fit_semi` only: ``weak_augment(batch, generator) -> batch``,
        applied to the labeled batches and to the unlabeled copies that are
        pseudo-labeled. ``batch`` is a float tensor of rows shaped like ``X``'s,
        on the training device, and ``generator`` a :class:`torch.Generator`
        on that device, seeded from ``random_state``, that should be the source
        of every random draw; it must return a tensor of the same shape, dtype
        and device. None: random horizontal flip and translation by up to
        12.5% of the side (:func:`~sklearn_labeldp.nn.weak_augment`), which
        needs images (see ``image_shape``). For tabular data pass your own,
        e.g. ``lambda x, g: x + 0.05 * torch.randn(x.shape, generator=g,
        device=x.device)``.
    strong_augment : callable or None, default=None
        :meth:`fit_semi` only: the strong augmentation of the unlabeled rows
        that learn from the pseudo-labels, with the same contract. None: the
        weak one, then two RandAugment-style operations per image and Cutout
        (:func:`~sklearn_labeldp.nn.strong_augment`).
    image_shape : tuple (C, H, W) or None, default=None
        :meth:`fit_semi` only: the image shape the default augmentations
        reshape each row to. None infers it: 4-d ``X`` gives its own, a flat
        ``X`` of ``d`` features, ``d`` a perfect square, gives
        ``(1, sqrt(d), sqrt(d))``; otherwise the default augmentations raise a
        ``ValueError``. Custom callables ignore it.
    device : str, torch.device or None, default="auto"
        ``"auto"`` means ``"cuda"`` when available, else ``"cpu"``; anything
        else is a torch device this machine has (None: skorch's "do not
        move"). The fitted ``device_`` says which was used.
    random_state : None, int, numpy.random.Generator or RandomState, default=None
        Seeds the module's initialisation, the shuffling, dropout, the mixup
        draws and the :meth:`fit_semi` augmentations and unlabeled batches of
        each fit, without changing the global torch RNG state. An int
        in ``[0, 2**63)`` makes fits on CPU reproducible; a generator gives a
        63-bit seed drawn from its stream (which advances); None draws fresh
        entropy every fit. Changing it on a fitted net changes nothing fitted.
    warm_start : bool, default=False
        Whether a new ``fit*`` call continues training the existing module
        (which needs the same number of outputs) instead of re-initialising it.
    verbose : int, default=0
        1 prints skorch's table of epochs.
    **kwargs
        Any other :class:`skorch.NeuralNet` argument: ``module__*``,
        ``optimizer__*``, ``callbacks``, ``iterator_train__*``,
        ``predict_nonlinearity``, ... ``train_split`` defaults to None (no
        internal validation split: holding labels out is the meta-estimator's
        business) and ``criterion`` to None (the loss follows the target kind as
        above; a criterion given here is used for every kind).

    Attributes
    ----------
    classes_ : ndarray of shape (n_outputs,)
        The labels for :meth:`fit` (other than ``-1`` for :meth:`fit_semi`),
        ``arange(K)`` for :meth:`fit_soft` and :meth:`fit_bits`.
    n_outputs_ : int
        Number of logits the module returns.
    target_kind_ : {"hard", "soft", "bits"}
        The kind of target the network learned last (``"hard"`` for
        :meth:`fit`, :meth:`partial_fit` and :meth:`fit_semi`).
    device_ : str or torch.device
        The device the network was trained on.
    n_features_in_ : int
        Number of features seen during fit (for array inputs).
    module_, optimizer_, criterion_, history_, callbacks_
        skorch's fitted components.

    Notes
    -----
    Every ``fit*`` method first checks, before any training or
    initialisation, the parameters' ranges above and the device (a ``ValueError``
    names the parameter and what it allows), then builds the module and runs it
    in evaluation mode on two rows of ``X``: a module that cannot take ``X``, or
    returns other than one logit per class or bit column, raises a
    ``ValueError`` naming ``module`` before the first training step.
    :meth:`fit_semi` also runs both augmentations on those two rows before
    initialising the module: an image shape that cannot be inferred, or a
    callable that fails or changes the shape, dtype or device, raises a
    ``ValueError`` naming ``image_shape``, ``weak_augment`` or
    ``strong_augment``. Its history records, per batch and per epoch, the
    labeled and unlabeled losses and the fraction of unlabeled rows above the
    threshold (``train_loss_x``, ``train_loss_u``, ``train_mask_rate``)
    besides ``train_loss``, their weighted sum.

    A net pickled on a device that the loading machine lacks (``"cuda"`` on a
    CPU-only machine) loads on the CPU, as skorch does, with a ``DeviceWarning``;
    its ``device`` parameter (unless ``"auto"``) and ``device_`` then say
    ``cpu``.

    ``sample_weight`` is not supported (``fit`` does not accept it). Training
    batches are slices of the whole training tensors, which are moved to the
    device once per fit when they fit in 2 GiB; a custom ``iterator_train``
    (or ``iterator_*__`` arguments other than ``batch_size`` and ``shuffle``)
    falls back to a :class:`torch.utils.data.DataLoader`. Training batches are
    shuffled by default (``iterator_train__shuffle=False`` turns it off), and a
    final training batch of a single sample is merged into the previous one.

    References
    ----------
    .. [1] Malek, M., Mironov, I., Prasad, K., Shilov, I. and Tramer, F.
       "Antipodes of label differential privacy: PATE and ALIBI", NeurIPS 2021
       (soft labels refreshed every epoch; PATE-FM's FixMatch student).
    .. [2] Zhao, P., Fan, R., Wu, H., Li, Q., Wu, J. and Liu, Z. "Enhancing
       learning with label differential privacy by vector approximation",
       arXiv:2405.15150, 2024 (ICLR 2025), Section 4.3 (one network with K
       sigmoid outputs and binary cross-entropy).
    .. [3] Ghazi, B., Golowich, N., Kumar, R., Manurangsi, P. and Zhang, C.
       "Deep learning with label differential privacy", NeurIPS 2021 (mixup).
    .. [4] Zhang, H., Cisse, M., Dauphin, Y. N. and Lopez-Paz, D. "mixup:
       Beyond empirical risk minimization", ICLR 2018.
    .. [5] Sohn, K., Berthelot, D., Li, C.-L., Zhang, Z., Carlini, N., Cubuk,
       E. D., Kurakin, A., Zhang, H. and Raffel, C. "FixMatch: Simplifying
       semi-supervised learning with consistency and confidence", NeurIPS 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from sklearn_labeldp.nn import FashionCNN, LabelDPNetClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> net = LabelDPNetClassifier(
    ...     FashionCNN, module__input_shape=(1, 8, 8), max_epochs=2, lr=0.05,
    ...     optimizer__momentum=0.9, random_state=0)
    >>> net.fit(X[:500] / 16, y[:500]).predict_proba(X[:3]).shape
    (3, 10)
    >>> soft = np.full((500, 10), 0.05)
    >>> soft[np.arange(500), y[:500]] = 0.55
    >>> net.fit_soft(X[:500] / 16, soft).classes_
    array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    >>> semi = np.where(np.arange(500) % 5 == 0, y[:500], -1)  # -1: unlabeled
    >>> net.fit_semi(X[:500] / 16, semi).history[-1]["train_mask_rate"] <= 1
    True
    """

    # Checked by _check_params at the start of every fit (skorch's own
    # _validate_params, which checks argument names, shadows scikit-learn's).
    _parameter_constraints: dict = {
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        # -1 is skorch's "the whole data in one batch".
        "batch_size": [Interval(Integral, 1, None, closed="left"), Options(Integral, {-1})],
        "lr": [Interval(Real, 0, None, closed="left")],
        "mixup_alpha": [Interval(Real, 0, None, closed="left")],
        "fixmatch_threshold": [Interval(Real, 0, 1, closed="both")],
        "unlabeled_weight": [Interval(Real, 0, None, closed="left")],
        "unlabeled_ratio": [Interval(Integral, 1, None, closed="left")],
        "weak_augment": [callable, None],
        "strong_augment": [callable, None],
        "image_shape": "no_validation",  # None or (C, H, W): check_image_shape
        "device": "no_validation",  # against this machine's devices: _check_device_available
        "random_state": [
            None,
            Interval(Integral, 0, 2**63, closed="left"),
            np.random.RandomState,
            np.random.Generator,
        ],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        module,
        *,
        max_epochs=10,
        batch_size=128,
        lr=0.01,
        optimizer=torch.optim.SGD,
        mixup_alpha=0.0,
        fixmatch_threshold=0.95,
        unlabeled_weight=1.0,
        unlabeled_ratio=7,
        weak_augment=None,
        strong_augment=None,
        image_shape=None,
        device="auto",
        random_state=None,
        warm_start=False,
        verbose=0,
        **kwargs,
    ):
        kwargs.setdefault("criterion", None)
        kwargs.setdefault("train_split", None)
        super().__init__(
            module,
            optimizer=optimizer,
            lr=lr,
            max_epochs=max_epochs,
            batch_size=batch_size,
            warm_start=warm_start,
            verbose=verbose,
            device=device,
            **kwargs,
        )
        self.mixup_alpha = mixup_alpha
        self.fixmatch_threshold = fixmatch_threshold
        self.unlabeled_weight = unlabeled_weight
        self.unlabeled_ratio = unlabeled_ratio
        self.weak_augment = weak_augment
        self.strong_augment = strong_augment
        self.image_shape = image_shape
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting

    def fit(self, X, y, **fit_params):
        """Train on hard labels with the cross-entropy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Any label values; ``classes_`` becomes ``np.unique(y)``.
        **fit_params : dict
            Passed to the module's ``forward``.

        Returns
        -------
        self
        """
        self._check_params()
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        check_consistent_length(X, y)
        classes, encoded = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(f"y needs at least 2 classes; got {len(classes)} class.")
        X = self._validate_X(X, reset=True)
        return self._fit(X, encoded.astype(np.int64), "hard", classes, **fit_params)

    def _fit_dp_sgd(self, X, codes, n_classes, training):
        """Train on label codes ``0..n_classes-1`` with DP-SGD (``training``'s state).

        Used by :class:`~sklearn_labeldp.nn.DPSGDClassifier`, which accounts for
        the run; every class is an output, whether or not it occurs in ``codes``.
        """
        self._check_params()
        X = self._validate_X(X, reset=True)
        codes = np.asarray(codes, dtype=np.int64)
        with warnings.catch_warnings():
            # Opacus's hooks on a first layer whose input needs no gradient: expected.
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            return self._fit(X, codes, "hard", np.arange(n_classes), dp_sgd=training)

    def partial_fit(self, X, y, classes=None, **fit_params):
        """Train on hard labels for ``max_epochs`` more epochs without re-initialising.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, default=None
            All labels; needed on the first call if ``y`` may miss some.
            Later calls keep the fitted ``classes_``.
        **fit_params : dict
            Passed to the module's ``forward``.

        Returns
        -------
        self
        """
        self._check_params()
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        check_consistent_length(X, y)
        continuing = self.__sklearn_is_fitted__() and self.target_kind_ == "hard"
        if continuing:
            classes = self.classes_
        else:
            classes = np.unique(y if classes is None else classes)
        if len(classes) < 2 or not np.all(np.isin(y, classes)):
            raise ValueError(f"y must take values in classes with at least 2 labels: {classes}.")
        X = self._validate_X(X, reset=not continuing)
        encoded = np.searchsorted(classes, y).astype(np.int64)
        return self._fit(X, encoded, "hard", classes, continue_training=True, **fit_params)

    def fit_soft(self, X, targets, *, refresh=None, **fit_params):
        """Train on soft labels with the soft cross-entropy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        targets : array-like of shape (n_samples, n_classes)
            Rows on the probability simplex; ``classes_`` becomes
            ``arange(n_classes)``.
        refresh : callable, default=None
            ``refresh(proba) -> new_targets``, called after every epoch but the
            last with this net's :meth:`predict_proba` on the training inputs
            (evaluation mode, shape (n_samples, n_classes)); its result replaces
            the targets for the next epoch. Runs as a
            :class:`~sklearn_labeldp.nn.TargetRefresh` callback named
            ``"target_refresh"``; it must be pure post-processing.
        **fit_params : dict
            Passed to the module's ``forward``.

        Returns
        -------
        self
        """
        self._check_params()
        if refresh is not None and not callable(refresh):
            raise TypeError(f"refresh must be None or callable; got {refresh!r}.")
        if refresh is not None and self.train_split is not None:
            raise ValueError(
                "refresh recomputes the targets of every training example, which needs "
                "train_split=None (the meta-estimators hold labels out themselves)."
            )
        targets = check_soft_targets(targets, _num_samples(X))
        X = self._validate_X(X, reset=True)
        classes = np.arange(targets.shape[1])
        return self._fit(X, targets, "soft", classes, refresh=refresh, **fit_params)

    def fit_bits(self, X, bits, **fit_params):
        """Train K sigmoid outputs on {0, 1} columns with binary cross-entropy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        bits : array-like of shape (n_samples, K)
            The randomized bit vectors; ``classes_`` becomes ``arange(K)``.
        **fit_params : dict
            Passed to the module's ``forward``.

        Returns
        -------
        self
        """
        self._check_params()
        bits = np.asarray(bits)
        n_samples = _num_samples(X)
        if bits.ndim != 2 or bits.shape[0] != n_samples or bits.shape[1] < 1:
            raise ValueError(
                f"bits must have shape ({n_samples}, K) with K >= 1; got {bits.shape}."
            )
        if not np.all((bits == 0) | (bits == 1)):
            raise ValueError("bits must contain only 0 and 1.")
        X = self._validate_X(X, reset=True)
        classes = np.arange(bits.shape[1])
        return self._fit(X, bits.astype(np.float32), "bits", classes, **fit_params)

    def fit_semi(self, X, y, **fit_params):
        """Semi-supervised training with FixMatch; ``-1`` in ``y`` marks an unlabeled row.

        Every step draws a mini-batch of labeled rows, weakly augmented, and
        ``unlabeled_ratio`` times as many unlabeled rows, cycled through in a
        fresh random order. The loss is the labeled cross-entropy plus
        ``unlabeled_weight`` times the unlabeled one: each unlabeled row whose
        weakly augmented copy the network classifies with probability at least
        ``fixmatch_threshold`` (computed without gradient) takes that class as
        pseudo-label for its strongly augmented copy; the others add 0, and
        the sum is divided by the whole unlabeled batch size. An epoch is one
        pass over the labeled rows. Without unlabeled rows this is :meth:`fit`
        on weakly augmented inputs. The labeled, weak unlabeled and strong
        unlabeled batches each get their own forward pass in training mode
        (FixMatch's code concatenates them into one, which differs only for
        BatchNorm, whose statistics here come from each batch separately).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, C, H, W)
            Labeled and unlabeled inputs alike.
        y : array-like of shape (n_samples,)
            Labels, ``-1`` for an unlabeled row (scikit-learn's
            semi-supervised convention, so ``-1`` cannot be a class); ints, or
            an object array mixing labels and ``-1``; a string array is
            refused. ``classes_`` becomes the sorted distinct labels other
            than ``-1``, at least two.
        **fit_params : dict
            Passed to the module's ``forward``.

        Returns
        -------
        self
        """
        self._check_params()
        if is_dataset(X):
            raise TypeError(
                "fit_semi needs X as an array or tensor, to split labeled from unlabeled rows; "
                "got a Dataset."
            )
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        if y.dtype.kind in "USV":
            raise ValueError(
                f"y has dtype {y.dtype}: fit_semi marks unlabeled rows by -1, so string "
                "labels need an object array with -1 for the unlabeled rows."
            )
        unlabeled = np.asarray(y == -1, dtype=bool)
        if unlabeled.shape != y.shape:  # an object array whose == did not broadcast
            unlabeled = np.array([label == -1 for label in y], dtype=bool)
        if unlabeled.all():
            raise ValueError("fit_semi needs labeled rows: every entry of y is -1 (unlabeled).")
        labels = y[~unlabeled]
        check_classification_targets(labels)
        classes, encoded = np.unique(labels, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(
                f"the labeled rows of y (y != -1) need at least 2 classes; got {len(classes)}."
            )
        X = self._validate_X(X, reset=True)
        mask = torch.from_numpy(unlabeled) if isinstance(X, torch.Tensor) else unlabeled
        pool = X[mask]
        return self._fit(
            X[~mask], encoded.astype(np.int64), "hard", classes, unlabeled=pool, **fit_params
        )

    def _fit(
        self,
        X,
        targets,
        kind,
        classes,
        *,
        refresh=None,
        unlabeled=None,
        dp_sgd=None,
        continue_training=False,
        **fit_params,
    ):
        n_outputs = len(classes)
        warm = (
            (self.warm_start or continue_training)
            and self.initialized_
            and getattr(self, "n_outputs_", None) is not None
        )
        previous_kind = getattr(self, "target_kind_", None)
        try:
            if warm and n_outputs != self.n_outputs_:
                raise ValueError(
                    f"warm_start continues a module with {self.n_outputs_} outputs, but the new "
                    f"targets have {n_outputs} columns/classes; set warm_start=False to start "
                    "over."
                )
            seed = _draw_seed(self.random_state)
            device = resolve_device(self.device)
            with self._device_context(), _seeded(seed, device):
                self.classes_ = classes
                self.n_outputs_ = n_outputs
                self.target_kind_ = kind
                self.device_ = device
                # numpy draws lambda; torch (seeded above) draws the permutations.
                self._mixup_rng_ = np.random.default_rng([seed, 1])
                semi = None
                if unlabeled is not None:
                    # Image shape and augmentation checks, before any initialisation.
                    semi = self._fixmatch_state(X, unlabeled, seed, device)
                if not warm:
                    self.initialize()
                elif kind != previous_kind:
                    self._initialize_criterion()
                self._check_forward(X, kind, **fit_params)
                self._fixmatch_ = semi
                if dp_sgd is not None:
                    # After the forward check, which materialises lazy layers.
                    dp_sgd.attach(self)
                self._dp_sgd_ = dp_sgd
                callback = None
                if refresh is not None:
                    callback = TargetRefresh(refresh).initialize()
                    self.callbacks_ = [*self.callbacks_, ("target_refresh", callback)]
                try:
                    NeuralNet.partial_fit(self, X, targets, _routing_method="fit", **fit_params)
                finally:
                    if callback is not None:
                        # The callback holds the caller's closure: do not keep (or pickle) it.
                        self.callbacks_ = [(n, c) for n, c in self.callbacks_ if c is not callback]
                    self._mixup_rng_ = None
                    self._fixmatch_ = None
                    if dp_sgd is not None:
                        dp_sgd.detach(self)
                    self._dp_sgd_ = None
        except BaseException:
            if not warm:
                self._forget_fit()
            raise
        return self

    def _fixmatch_state(self, X, pool, seed, device):
        """Check the augmentations on two rows of ``X`` and set up the unlabeled stream."""
        if device is not None:
            compute_device = torch.device(device)
        elif isinstance(X, torch.Tensor):
            compute_device = X.device
        else:
            compute_device = torch.device("cpu")
        augment = {"weak_augment": self.weak_augment, "strong_augment": self.strong_augment}
        if None in augment.values():
            shape = resolve_image_shape(X.shape[1:], self.image_shape)
            defaults = {"weak_augment": weak_augment, "strong_augment": strong_augment}
            for name, function in augment.items():
                if function is None:
                    augment[name] = partial(defaults[name], image_shape=shape)
        rows = _as_tensor(X[:2], float32=True).to(compute_device)
        for name, function in augment.items():
            generator = torch.Generator(device=compute_device).manual_seed(0)
            try:
                out = function(rows.clone(), generator)
            except Exception as exc:
                raise ValueError(
                    f"{name} failed on {len(rows)} row(s) of X of shape {tuple(rows.shape)} "
                    f"with a torch.Generator on {compute_device}: {type(exc).__name__}: {exc}"
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
        pool = _as_tensor(pool, float32=True)
        if device is not None and pool.nbytes <= _STAGE_LIMIT_BYTES:
            pool = pool.to(device)
        return _FixMatchStream(
            pool,
            weak=augment["weak_augment"],
            strong=augment["strong_augment"],
            seed=seed,
            device=compute_device,
        )

    def _forget_fit(self):
        for name in _FITTED_ATTRIBUTES:
            self.__dict__.pop(name, None)
        self.initialized_ = False

    def _check_params(self):
        """Reject out-of-range parameters and an absent device before any work."""
        validate_parameter_constraints(
            self._parameter_constraints,
            {name: getattr(self, name) for name in self._parameter_constraints},
            caller_name=type(self).__name__,
        )
        if self.image_shape is not None:
            check_image_shape(self.image_shape)
        _check_device_available(self.device)

    def _check_forward(self, X, kind, **fit_params):
        """Run the module on two rows of ``X`` and check it returns one logit per output.

        An architecture that does not fit the data (a wrong ``module__input_shape``,
        a first layer of the wrong width, a module that ignores ``n_outputs``)
        would otherwise fail deep in the first training step with a raw torch
        error, or train against targets of another width. Evaluation mode under
        ``no_grad`` changes no weight or BatchNorm statistic, and with dropout
        off the usual layers draw no random number.
        """
        if not isinstance(X, (np.ndarray, torch.Tensor)):
            return  # a Dataset yields whatever its author made; training will tell
        rows = X[:2]
        self._set_training(False)
        try:
            with torch.no_grad():
                logits = self.infer(rows, **fit_params)
        except Exception as exc:
            raise ValueError(
                f"module (with its module__* parameters) cannot take X of shape "
                f"{tuple(X.shape)}: a forward pass of {len(rows)} row(s) raised "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != (
            len(rows),
            self.n_outputs_,
        ):
            got = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits)
            what = "bit columns" if kind == "bits" else "classes"
            raise ValueError(
                f"module must return logits of shape (n_samples, {self.n_outputs_}), as the "
                f"targets have {self.n_outputs_} {what}; for {len(rows)} row(s) of X it "
                f"returned {got}. Give the module that output width (module__n_outputs)."
            )

    def _validate_X(self, X, reset):
        if is_dataset(X) or isinstance(X, torch.Tensor):
            return X  # torch inputs are the caller's responsibility
        return validate_data(self, X, reset=reset, dtype=np.float32, allow_nd=True)

    # ---------------------------------------------------------- skorch hooks

    def initialize_criterion(self):
        """Instantiate the loss of the current target kind (or the user's ``criterion``)."""
        criterion = self.criterion
        if criterion is None:
            criterion = _LOSSES[getattr(self, "target_kind_", None) or "hard"]
        kwargs = self.get_params_for("criterion")
        self.criterion_ = self.initialized_instance(criterion, kwargs)
        return self

    def get_params_for(self, prefix):
        """skorch's ``get_params_for`` plus ``n_outputs`` for the module at fit time."""
        params = super().get_params_for(prefix)
        if (
            prefix == "module"
            and "n_outputs" not in params
            and getattr(self, "n_outputs_", None) is not None
            and not isinstance(self.module, nn.Module)
            and _accepts_keyword(self.module, "n_outputs")
        ):
            params["n_outputs"] = self.n_outputs_
        return params

    def _initialize_module(self, reason=None):
        with self._device_context():
            return super()._initialize_module(reason=reason)

    def _initialize_criterion(self, reason=None):
        with self._device_context():
            return super()._initialize_criterion(reason=reason)

    @contextmanager
    def _device_context(self):
        """Let skorch's internals see the resolved device while keeping the parameter."""
        requested = self.__dict__["device"]
        resolved = resolve_device(requested)
        if resolved is requested:
            yield
            return
        self.__dict__["device"] = resolved
        try:
            yield
        finally:
            self.__dict__["device"] = requested

    def get_dataset(self, X, y=None):
        """Whole-tensor dataset for in-memory arrays (skorch's ``dataset`` otherwise)."""
        if is_dataset(X):
            return X
        if self.dataset is not Dataset or self.get_params_for("dataset"):
            return super().get_dataset(X, y)
        X = _as_tensor(X, float32=True)
        y = None if y is None else _as_tensor(y)
        device = resolve_device(self.device)
        size = X.nbytes + (0 if y is None else y.nbytes)
        if device is not None and size <= _STAGE_LIMIT_BYTES:
            X = X.to(device)
            y = None if y is None else y.to(device)
        return _ArrayDataset(X, y)

    def get_iterator(self, dataset, training=False):
        """Batches of ``dataset``; training batches are shuffled unless told otherwise.

        During a DP-SGD fit (:class:`~sklearn_labeldp.nn.DPSGDClassifier`) the
        training batches are Poisson samples instead.
        """
        dp_sgd = getattr(self, "_dp_sgd_", None)
        if training and dp_sgd is not None:
            return dp_sgd.batches(dataset)
        prefix = "iterator_train" if training else "iterator_valid"
        iterator = self.iterator_train if training else self.iterator_valid
        kwargs = self.get_params_for(prefix)
        kwargs.setdefault("batch_size", self.batch_size)
        if kwargs["batch_size"] == -1:
            kwargs["batch_size"] = len(dataset)
        if iterator is DataLoader:
            kwargs.setdefault("shuffle", training)
            if isinstance(dataset, _ArrayDataset) and set(kwargs) <= {"batch_size", "shuffle"}:
                return _ArrayBatches(dataset, **kwargs)
        return iterator(dataset, **kwargs)

    def run_single_epoch(self, iterator, training, prefix, step_fn, **fit_params):
        """skorch's epoch loop, reading the batch losses back once per epoch.

        skorch records ``loss.item()`` after every batch, which waits for the
        accelerator each time; here the losses stay on the device until the
        epoch ends, so the host can queue the next batch while the device
        computes. The history holds the same numbers once the epoch is over (a
        callback reading a batch's loss in ``on_batch_end`` sees it missing).
        """
        if iterator is None:
            return
        if not isinstance(self.history, History):
            super().run_single_epoch(iterator, training, prefix, step_fn, **fit_params)
            return
        key = prefix + "_loss"
        rows, losses, sizes = [], [], []
        extras = {name: [] for name in _FIXMATCH_KEYS}
        for batch in iterator:
            self.notify("on_batch_begin", batch=batch, training=training)
            step = step_fn(batch, **fit_params)
            row = self.history[-1]["batches"][-1]
            sizes.append(get_len(batch[0]))
            row[prefix + "_batch_size"] = sizes[-1]
            rows.append(row)
            losses.append(step["loss"].detach())
            for name, values in extras.items():
                if name in step:
                    values.append(step[name])
            self.notify("on_batch_end", batch=batch, training=training, **step)
        if losses:
            for row, value in zip(rows, torch.stack(losses).tolist(), strict=True):
                row[key] = value
        for name, values in extras.items():
            # FixMatch's loss terms and mask rate: per batch, and their epoch mean
            # weighted like skorch's train_loss.
            if values and len(values) == len(rows):
                values = torch.stack(values).tolist()
                for row, value in zip(rows, values, strict=True):
                    row[f"{prefix}_{name}"] = value
                mean = float(np.average(values, weights=sizes))
                self.history.record(f"{prefix}_{name}", mean)
        self.history.record(prefix + "_batch_count", len(rows))

    def train_step_single(self, batch, **fit_params):
        """skorch's training step, with mixup of the batch when ``mixup_alpha > 0``.

        Within :meth:`fit_semi`, the FixMatch step: the batch is weakly
        augmented, and an unlabeled batch adds its masked pseudo-label loss.
        """
        self._set_training(True)
        Xi, yi = unpack_data(batch)
        semi = getattr(self, "_fixmatch_", None)
        if semi is not None:
            return self._fixmatch_step(semi, Xi, yi, **fit_params)
        if self.mixup_alpha > 0:
            Xi, yi = self._mixup(Xi, yi)
        y_pred = self.infer(Xi, **fit_params)
        loss = self.get_loss(y_pred, yi, X=Xi, training=True)
        loss.backward()
        return {"loss": loss, "y_pred": y_pred}

    def _fixmatch_step(self, semi, Xi, yi, **fit_params):
        if not isinstance(Xi, torch.Tensor):
            raise TypeError("fit_semi needs tensor batches; got " + type(Xi).__name__)
        Xi = semi.weak(Xi.to(semi.device), semi.labeled_generator)
        if self.mixup_alpha > 0:
            Xi, yi = self._mixup(Xi, yi)
        y_pred = self.infer(Xi, **fit_params)
        loss = loss_x = self.get_loss(y_pred, yi, X=Xi, training=True)
        step = {"y_pred": y_pred}
        if semi.n_unlabeled:
            u = semi.next_batch(self.unlabeled_ratio * len(Xi))
            generator = semi.unlabeled_generator
            with torch.no_grad():
                weak_logits = self.infer(semi.weak(u, generator), **fit_params)
            strong_logits = self.infer(semi.strong(u, generator), **fit_params)
            loss_u, mask = fixmatch_unlabeled_loss(
                weak_logits, strong_logits, self.fixmatch_threshold
            )
            loss = loss_x + self.unlabeled_weight * loss_u
            step.update(loss_x=loss_x.detach(), loss_u=loss_u.detach(), mask_rate=mask.mean())
        loss.backward()
        step["loss"] = loss
        return step

    def _mixup(self, Xi, yi):
        if not isinstance(Xi, torch.Tensor):
            raise TypeError("mixup needs tensor inputs; use mixup_alpha=0 with this dataset.")
        device = resolve_device(self.device)
        Xi = to_tensor(Xi, device=device)
        yi = to_tensor(yi, device=device)
        if not torch.is_floating_point(yi):
            # scatter_ rather than F.one_hot, whose range check waits for the device.
            one_hot = torch.zeros(len(yi), self.n_outputs_, dtype=Xi.dtype, device=yi.device)
            yi = one_hot.scatter_(1, yi.unsqueeze(1), 1.0)
        lam = float(self._mixup_rng_.beta(self.mixup_alpha, self.mixup_alpha))
        perm = torch.randperm(len(Xi), device=Xi.device)
        return lam * Xi + (1.0 - lam) * Xi[perm], lam * yi + (1.0 - lam) * yi[perm]

    def infer(self, x, **fit_params):
        """Forward pass of one batch on the resolved device."""
        x = to_tensor(x, device=resolve_device(self.device))
        if isinstance(x, Mapping):
            return self.module_(**self._merge_x_and_fit_params(x, fit_params))
        return self.module_(x, **fit_params)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        """The criterion of the current target kind on one batch."""
        y_true = to_tensor(y_true, device=resolve_device(self.device))
        return self.criterion_(y_pred, y_true)

    def _get_predict_nonlinearity(self):
        if isinstance(self.predict_nonlinearity, str) and self.predict_nonlinearity == "auto":
            self.check_is_fitted()
            if getattr(self, "target_kind_", None) == "bits":
                return torch.sigmoid
            return partial(torch.softmax, dim=-1)
        return super()._get_predict_nonlinearity()

    # ------------------------------------------------------------ prediction

    def predict_proba(self, X):
        """Softmax class probabilities (sigmoid per column after :meth:`fit_bits`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, ``n_outputs_``), float64
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return np.asarray(super().predict_proba(X), dtype=np.float64)

    def predict(self, X):
        """``classes_[argmax(predict_proba(X))]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def __sklearn_is_fitted__(self):
        return self.initialized_ and hasattr(self, "classes_")

    # ---------------------------------------------------------- persistence

    def __setstate__(self, state):
        requested = state["device"]
        state["device"] = resolve_device(requested)
        # skorch maps the weights onto the saved device, or onto the CPU with a
        # DeviceWarning (setting ``device`` to the CPU) when that one is absent.
        super().__setstate__(state)
        if "device_" in self.__dict__:
            self.__dict__["device_"] = self.__dict__["device"]
        if isinstance(requested, str) and requested == "auto":
            self.__dict__["device"] = requested

    def load_params(self, *args, **kwargs):
        """skorch's ``load_params`` on the resolved device."""
        with self._device_context():
            return super().load_params(*args, **kwargs)
