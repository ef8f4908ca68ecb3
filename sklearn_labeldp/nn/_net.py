"""A skorch classifier that learns hard labels, soft labels or bit vectors.

It also learns from partly labeled data with FixMatch (``fit_semi``). Its one
training loop (:meth:`LabelDPNetClassifier._fit`) takes the fit's training
mode (:mod:`sklearn_labeldp.nn._training`) as an argument; the hooks of
skorch's ``NeuralNet`` that it overrides are
:class:`~sklearn_labeldp.nn._skorch_hooks.SkorchHooksMixin`, and the functions
in :mod:`sklearn_labeldp.nn._net_access` are what the rest of the package
calls of a network besides its public methods.
"""

from numbers import Integral, Real

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
from skorch.utils import is_dataset

from ._augment import check_image_shape
from ._data import (
    check_bit_targets,
    check_device_available,
    check_soft_targets,
    draw_seed,
    resolve_device,
    seeded,
    split_unlabeled,
)
from ._skorch_hooks import SkorchHooksMixin
from ._training import (
    FixMatchTraining,
    MixupTraining,
    TargetRefreshTraining,
    combine,
    train_epochs,
)

__all__ = ["LabelDPNetClassifier"]

_FITTED_ATTRIBUTES = (
    "classes_",
    "n_outputs_",
    "target_kind_",
    "device_",
    "n_features_in_",
    "feature_names_in_",
)


class LabelDPNetClassifier(ClassifierMixin, SkorchHooksMixin, NeuralNet):
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

    def _expected_failed_checks(self):
        # See sklearn_labeldp.utils.expected_failed_checks.
        return {
            "check_no_attributes_set_in_init": (
                "skorch's NeuralNet.__init__ sets history_, initialized_ and virtual_params_"
            ),
            "check_set_params": (
                "skorch's get_params lists its bookkeeping set _params_to_validate; the check "
                "sets it to a float, on which skorch's own set_params then calls .add"
            ),
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
        y = self._check_hard_labels(X, y)
        classes, encoded = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(f"y needs at least 2 classes; got {len(classes)} class.")
        X = self._validate_X(X, reset=True)
        return self._fit(
            X, encoded.astype(np.int64), "hard", classes, self._training(), **fit_params
        )

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
        y = self._check_hard_labels(X, y)
        continuing = self.__sklearn_is_fitted__() and self.target_kind_ == "hard"
        if continuing:
            classes = self.classes_
        else:
            classes = np.unique(y if classes is None else classes)
        if len(classes) < 2 or not np.all(np.isin(y, classes)):
            raise ValueError(f"y must take values in classes with at least 2 labels: {classes}.")
        X = self._validate_X(X, reset=not continuing)
        encoded = np.searchsorted(classes, y).astype(np.int64)
        return self._fit(
            X, encoded, "hard", classes, self._training(), continue_training=True, **fit_params
        )

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
        refreshing = None if refresh is None else TargetRefreshTraining(refresh)
        training = self._training(refreshing)
        return self._fit(X, targets, "soft", classes, training, **fit_params)

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
        bits = check_bit_targets(bits, _num_samples(X))
        X = self._validate_X(X, reset=True)
        classes = np.arange(bits.shape[1])
        return self._fit(X, bits, "bits", classes, self._training(), **fit_params)

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
        unlabeled, classes, codes = split_unlabeled(y)
        X = self._validate_X(X, reset=True)
        mask = torch.from_numpy(unlabeled) if isinstance(X, torch.Tensor) else unlabeled
        fixmatch = FixMatchTraining(
            X[mask],
            threshold=self.fixmatch_threshold,
            unlabeled_weight=self.unlabeled_weight,
            unlabeled_ratio=self.unlabeled_ratio,
            weak_augment=self.weak_augment,
            strong_augment=self.strong_augment,
            image_shape=self.image_shape,
        )
        return self._fit(X[~mask], codes, "hard", classes, self._training(fixmatch), **fit_params)

    def _training(self, *modes):
        """The fit's training mode: ``modes``, then mixup when ``mixup_alpha > 0``."""
        mixup = MixupTraining(self.mixup_alpha) if self.mixup_alpha > 0 else None
        return combine(*modes, mixup)

    def _check_hard_labels(self, X, y):
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        check_consistent_length(X, y)
        return y

    def _fit(self, X, targets, kind, classes, training, *, continue_training=False, **fit_params):
        """The one training loop of every ``fit*`` method: ``training`` is the fit's mode.

        Sets the fitted attributes, lets ``training`` check and seed its state
        (:meth:`~sklearn_labeldp.nn._training.Training.prepare`), initialises
        the module (unless warm-starting), checks a forward pass on two rows of
        ``X``, attaches ``training``, trains ``max_epochs`` epochs with it
        (:func:`~sklearn_labeldp.nn._training.train_epochs`) and detaches it.
        A failed fit that did not continue an earlier one leaves no fitted
        attribute.
        """
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
            seed = draw_seed(self.random_state)
            device = resolve_device(self.device)
            with self._device_context(), seeded(seed, device):
                self.classes_ = classes
                self.n_outputs_ = n_outputs
                self.target_kind_ = kind
                self.device_ = device
                # Label-free checks (e.g. FixMatch's augmentations) before any initialisation.
                training.prepare(self, X, seed)
                if not warm:
                    self.initialize()
                elif kind != previous_kind:
                    self._initialize_criterion()
                self._check_forward(X, kind, **fit_params)
                try:
                    # After the forward check, which materialises lazy layers.
                    training.attach(self)
                    train_epochs(self, X, targets, training, **fit_params)
                finally:
                    training.detach(self)
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
        if self.image_shape is not None:
            check_image_shape(self.image_shape)
        check_device_available(self.device)

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
