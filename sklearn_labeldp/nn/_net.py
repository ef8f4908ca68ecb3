"""A skorch classifier that learns hard labels, soft labels or bit vectors."""

import inspect
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
      then returns the K sigmoids, whose rows need not sum to one.

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
    device : str, torch.device or None, default="auto"
        ``"auto"`` means ``"cuda"`` when available, else ``"cpu"``; anything
        else is a torch device this machine has (None: skorch's "do not
        move"). The fitted ``device_`` says which was used.
    random_state : None, int, numpy.random.Generator or RandomState, default=None
        Seeds the module's initialisation, the shuffling, dropout and the mixup
        draws of each fit, without changing the global torch RNG state. An int
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
        The labels for :meth:`fit`, ``arange(K)`` for :meth:`fit_soft` and
        :meth:`fit_bits`.
    n_outputs_ : int
        Number of logits the module returns.
    target_kind_ : {"hard", "soft", "bits"}
        Which ``fit*`` method trained the network last.
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
       (soft labels refreshed every epoch).
    .. [2] Zhao, P., Fan, R., Wu, H., Li, Q., Wu, J. and Liu, Z. "Enhancing
       learning with label differential privacy by vector approximation",
       arXiv:2405.15150, 2024 (ICLR 2025), Section 4.3 (one network with K
       sigmoid outputs and binary cross-entropy).
    .. [3] Ghazi, B., Golowich, N., Kumar, R., Manurangsi, P. and Zhang, C.
       "Deep learning with label differential privacy", NeurIPS 2021 (mixup).
    .. [4] Zhang, H., Cisse, M., Dauphin, Y. N. and Lopez-Paz, D. "mixup:
       Beyond empirical risk minimization", ICLR 2018.

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
    """

    # Checked by _check_params at the start of every fit (skorch's own
    # _validate_params, which checks argument names, shadows scikit-learn's).
    _parameter_constraints: dict = {
        "max_epochs": [Interval(Integral, 1, None, closed="left")],
        # -1 is skorch's "the whole data in one batch".
        "batch_size": [Interval(Integral, 1, None, closed="left"), Options(Integral, {-1})],
        "lr": [Interval(Real, 0, None, closed="left")],
        "mixup_alpha": [Interval(Real, 0, None, closed="left")],
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

    def _fit(
        self, X, targets, kind, classes, *, refresh=None, continue_training=False, **fit_params
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
                if not warm:
                    self.initialize()
                elif kind != previous_kind:
                    self._initialize_criterion()
                self._check_forward(X, kind, **fit_params)
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
        except BaseException:
            if not warm:
                self._forget_fit()
            raise
        return self

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
        """Batches of ``dataset``; training batches are shuffled unless told otherwise."""
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
        rows, losses = [], []
        for batch in iterator:
            self.notify("on_batch_begin", batch=batch, training=training)
            step = step_fn(batch, **fit_params)
            row = self.history[-1]["batches"][-1]
            row[prefix + "_batch_size"] = get_len(batch[0])
            rows.append(row)
            losses.append(step["loss"].detach())
            self.notify("on_batch_end", batch=batch, training=training, **step)
        if losses:
            for row, value in zip(rows, torch.stack(losses).tolist(), strict=True):
                row[key] = value
        self.history.record(prefix + "_batch_count", len(rows))

    def train_step_single(self, batch, **fit_params):
        """skorch's training step, with mixup of the batch when ``mixup_alpha > 0``."""
        self._set_training(True)
        Xi, yi = unpack_data(batch)
        if self.mixup_alpha > 0:
            Xi, yi = self._mixup(Xi, yi)
        y_pred = self.infer(Xi, **fit_params)
        loss = self.get_loss(y_pred, yi, X=Xi, training=True)
        loss.backward()
        return {"loss": loss, "y_pred": y_pred}

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
