"""DP-SGD for skorch networks: Opacus's clipping, Poisson batches, noisy steps.

DP-SGD (Abadi et al. 2016) protects whole examples, features and labels: every
step samples each example independently with probability ``q`` (Poisson
sampling), clips each per-example gradient to L2 norm ``C``, adds Gaussian
noise of std ``sigma C`` to their sum and divides by the expected batch size
``q n``; the optimiser's step is post-processing. The clipping and the noisy
sum are Opacus's (ghost clipping for the layers it covers, per-sample
gradients for the others); the Poisson batches and the noise are drawn from the
fit's numpy generator (128-bit seeded, or the ``"secure"`` AES generator) on
the CPU, and on a CUDA device from two Philox generators seeded from it
(:mod:`~sklearn_labeldp.nn._dp_sgd_steps`), never from a 64-bit torch seed.
The privacy of the ``T`` steps for a label change is dp-accounting's privacy
loss distribution of the replace-one relation
(:func:`~sklearn_labeldp.accounting.subsampled_gaussian_label_epsilon`).
"""

import math
import warnings
from numbers import Real

import numpy as np
import torch
from sklearn.base import _fit_context, clone
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from skorch.callbacks import EpochTimer, LRScheduler, PassthroughScoring, PrintLog
from torch.optim.lr_scheduler import ReduceLROnPlateau

from .._base import (
    BaseLabelDPMetaClassifier,
    seed_estimator,
    trial_codes,
)
from .._predict import CodeClassifierPredictMixin
from ..accounting import (
    SUBSAMPLED_GAUSSIAN_METHODS,
    PrivacySpend,
    calibrate_dp_sgd_label_change,
)
from ..utils._random import spawn_generators
from ..utils._validation import non_numeric_columns
from ._callbacks import WarmupLinearDecay
from ._dp_sgd_defaults import default_training
from ._dp_sgd_steps import ghost_clippable, noisy_optimizer, random_source
from ._net import LabelDPNetClassifier
from ._net_access import check_params, fit_label_codes
from ._networks import MLP
from ._rebuild import rebuild_network
from ._training import Training

__all__ = ["DPSGDClassifier"]


def _opacus():
    try:
        from opacus import GradSampleModule
        from opacus.grad_sample import GradSampleModuleFastGradientClipping
        from opacus.optimizers import DPOptimizer, DPOptimizerFastGradientClipping
        from opacus.utils.fast_gradient_clipping_utils import DPLossFastGradientClipping
    except ImportError as exc:
        raise ImportError(
            "DPSGDClassifier needs Opacus (per-sample gradients) and dp-accounting: "
            "pip install 'sklearn-labeldp[dp-sgd]'."
        ) from exc
    return {
        "per_sample": (GradSampleModule, DPOptimizer),
        "ghost": (GradSampleModuleFastGradientClipping, DPOptimizerFastGradientClipping),
        "ghost_loss": DPLossFastGradientClipping,
    }


class _PoissonBatches:
    """``n_steps`` batches, each row in each independently with probability ``sample_rate``.

    The coins come from the fit's random source (on the host or the device);
    a batch may be empty (the step then releases noise only, as the accounting
    assumes).
    """

    def __init__(self, dataset, sample_rate, n_steps, source):
        self.dataset = dataset
        self.sample_rate = sample_rate
        self.n_steps = n_steps
        self.source = source

    def __len__(self):
        return self.n_steps

    def __iter__(self):
        X, y = self.dataset.X, self.dataset.y
        for _ in range(self.n_steps):
            index = self.source.rows(len(X), self.sample_rate, X.device)
            yield X[index], y[index]


class DPSGDTraining(Training):
    """DP-SGD's training mode: attached to a network for the length of its training.

    The mode (:class:`~sklearn_labeldp.nn._training.Training`) wraps the module,
    optimizer and criterion in Opacus's clipping and noisy steps
    (:meth:`attach`, undone by :meth:`detach`) and draws the Poisson batches
    (:meth:`batches`); the step itself is plain. The per-example norms come
    from ghost clipping wherever a layer has a norm sampler, from per-sample
    gradients otherwise; the coins and the noise from the device's generators
    on a CUDA device, from the fit's numpy generator otherwise
    (:mod:`~sklearn_labeldp.nn._dp_sgd_steps`). It needs every example's
    gradient to depend on that example alone, so it cannot be combined with
    mixup.

    Parameters
    ----------
    noise_multiplier : float
        Noise std divided by ``max_grad_norm``.
    max_grad_norm : float
        Clipping norm ``C`` of every per-example gradient.
    sample_rate : float
        Poisson sampling probability ``q``.
    steps_per_epoch : int
        Noisy steps per epoch.
    n_samples : int
        Number of training rows ``n``; the noisy sum is divided by ``q n``.
    rng : numpy.random.Generator
        The fit's mechanism stream: the source of the batches and the noise,
        or of the device generators' seeds.
    show_progress : bool, default=False
        A progress bar over the epochs.
    denoiser : object or None, default=None
        Post-processing of every noisy step's gradient, reading no label:
        ``denoiser.attach(module, X)`` when training starts (the module
        before Opacus wraps it and the public training features),
        ``denoiser(params)`` after every step's noisy average (it may replace
        each parameter's ``.grad``), and ``denoiser.detach()`` when training
        ends.
    ghost_clipping : {"auto", False}, default="auto"
        ``"auto"``: ghost clipping where it serves the network
        (:func:`~sklearn_labeldp.nn._dp_sgd_steps.ghost_clippable`);
        ``False``: per-sample gradients always.
    """

    per_example_gradients = True

    def __init__(self, noise_multiplier, max_grad_norm, sample_rate, steps_per_epoch, n_samples,
                 rng, show_progress=False, denoiser=None, ghost_clipping="auto"):
        self.show_progress = show_progress
        self.denoiser = denoiser
        self.noise_multiplier = noise_multiplier
        self.max_grad_norm = max_grad_norm
        self.sample_rate = sample_rate
        self.steps_per_epoch = steps_per_epoch
        self.n_samples = n_samples
        self.rng = rng
        self.ghost_clipping = ghost_clipping
        self.source = None
        self.features = None

    def prepare(self, net, X, seed):
        """The coins' and noise's source for the fit's device; the public features kept."""
        self.source = random_source(self.rng, net.device_)
        self.features = X

    def attach(self, net):
        """Wrap ``net``'s module, optimizer and criterion for clipping and noisy steps."""
        opacus = _opacus()
        for layer in net.module_.modules():
            if getattr(layer, "inplace", False):
                # Opacus's backward hooks refuse in-place activations (e.g.
                # ReLU(inplace=True)); out of place computes the same function.
                layer.inplace = False
        if self.denoiser is not None:
            self.denoiser.attach(net.module_, self.features)
        ghost = self.ghost_clipping == "auto" and ghost_clippable(net.module_)
        module_type, optimizer_type = opacus["ghost" if ghost else "per_sample"]
        # Per-example losses are summed (an empty batch has loss 0, not NaN), and
        # the optimizer divides the noisy sum by the expected batch size q n.
        criterion = torch.nn.CrossEntropyLoss(reduction="sum")
        module_options = {"max_grad_norm": self.max_grad_norm} if ghost else {}
        net.module_ = module_type(net.module_, loss_reduction="sum", **module_options)
        net.optimizer_ = noisy_optimizer(optimizer_type, self.source, self.denoiser)(
            net.optimizer_,
            noise_multiplier=self.noise_multiplier,
            max_grad_norm=self.max_grad_norm,
            expected_batch_size=self.sample_rate * self.n_samples,
            loss_reduction="sum",
        )
        if ghost:
            # The loss's backward takes the two passes of ghost clipping.
            criterion = opacus["ghost_loss"](net.module_, net.optimizer_, criterion,
                                             loss_reduction="sum")
        net.criterion_ = criterion

    def batches(self, dataset):
        """``steps_per_epoch`` Poisson batches of ``dataset`` per epoch."""
        return _PoissonBatches(dataset, self.sample_rate, self.steps_per_epoch, self.source)

    def detach(self, net):
        """Unwrap the module and optimizer (Opacus's hooks removed).

        The trained network still holds what the training computed from the
        private data without noise (Opacus's ``summed_grad`` on every
        parameter, the noisy ``.grad``, the scoring callbacks' best loss, every
        batch's loss and size in the history): it is never released, only
        read by :func:`~sklearn_labeldp.nn._rebuild.rebuild_network`.
        """
        if hasattr(net.module_, "_close"):
            module = net.module_._module
            net.module_._close()
            net.module_ = module
        if hasattr(net.optimizer_, "original_optimizer"):
            net.optimizer_ = net.optimizer_.original_optimizer
        if self.denoiser is not None:
            self.denoiser.detach()
        self.source = None
        self.features = None


def _follows_the_loss(policy):
    """Whether a skorch ``LRScheduler`` policy reads a monitored score (the training loss)."""
    if isinstance(policy, str):
        return policy == "ReduceLROnPlateau"
    return isinstance(policy, type) and issubclass(policy, ReduceLROnPlateau)


def _train(codes, *, net, shell, X, n_classes, training):
    """The mechanism: DP-SGD training of ``net`` on the label codes (the only reader of them).

    Its output is ``shell`` rebuilt with the trained parameter and buffer values
    only: the trained object itself never leaves the release.
    """
    with warnings.catch_warnings():
        # Opacus's hooks on a first layer whose input needs no gradient: expected.
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        trained = fit_label_codes(net, X, codes, n_classes, training)
    return rebuild_network(shell, trained, X, n_classes)


class DPSGDClassifier(CodeClassifierPredictMixin, BaseLabelDPMetaClassifier):
    """A network trained with DP-SGD: differential privacy for whole examples.

    The full-DP baseline of label DP (Abadi et al. 2016): DP-SGD protects the
    features as well as the labels. Every step samples each training example
    independently with probability ``q = batch_size / n`` (Poisson
    sampling), clips each per-example gradient to L2 norm ``max_grad_norm``
    (Opacus's per-sample gradients), adds Gaussian noise of std
    ``noise_multiplier * max_grad_norm`` to the sum and divides it by ``q n``;
    the network's optimizer then takes its step. An epoch is ``ceil(1 / q)``
    steps, and ``T = max_epochs * ceil(1 / q)``.

    Privacy. The ``T`` steps are the Poisson-subsampled Gaussian mechanism
    composed ``T`` times. The library records every spend for its own
    relation, changing one label, which replaces one example by another: its
    clipped gradient moves by at most ``2 max_grad_norm``. That relation is
    accounted directly, by dp-accounting's privacy loss distribution of the
    replace-one dominating pair under Poisson sampling (Zhu, Dong and Wang
    2022; Lebeda et al. 2024), and the noise is calibrated so that it is at
    most ``(epsilon, delta)``
    (:func:`~sklearn_labeldp.accounting.calibrate_dp_sgd_label_change`).
    ``epsilon_`` and ``delta_`` are that label-DP guarantee, comparable with
    the other estimators of the library; ``example_epsilon_`` and
    ``example_delta_`` are the example-level (add/remove) guarantee of the
    same run, usually quoted for DP-SGD. Before version 0.1 the label-DP
    guarantee came from the add/remove one by group privacy, ``(2 eps_ex, (1
    + e^eps_ex) delta_ex)``, which needs 1.1 to 1.4 times more noise for the
    same budget.

    Nothing non-private leaves the fit. The trained network holds what the
    training computed without noise: Opacus's sum of the last step's clipped
    per-example gradients on every parameter, the scoring callbacks' best
    loss on the true labels, every batch's loss and Poisson batch size in the
    history. So ``estimator_`` is not the trained network but a new one built
    from the configuration, initialised the ordinary way, into whose fresh
    module the trained parameter and buffer values are copied: a fresh
    optimizer, criterion and callbacks, no gradients, and a history of the
    epoch numbers only. The network prints nothing during the fit.

    Parameters
    ----------
    estimator : LabelDPNetClassifier, default=None
        The network, its optimizer, learning rate, ``max_epochs``, device and
        expected batch size (``batch_size``; -1, or at least the number of
        rows, for full batches, ``q = 1``).
        ``None`` means ``LabelDPNetClassifier(MLP)`` with its width
        (``module__hidden_units``), ``batch_size``, ``max_epochs`` and ``lr``
        resolved at fit time from ``n``, ``d``, ``K`` and ``epsilon`` alone
        (:func:`~sklearn_labeldp.nn._dp_sgd_defaults.default_training`): a
        linear model (no hidden layer) with batches of 256 below a crossover
        epsilon between 0.25 and 1 that grows with the MLP's parameters per
        row (:func:`~sklearn_labeldp.nn._dp_sgd_defaults.linear_below`), where
        the noise swamps a hidden layer; above it one hidden layer of 64, with
        larger batches, more epochs and a learning rate scaled with the batch
        as the budget grows (De et al. 2022; Ponomareva et al. 2023), 64, 20
        and 0.1 up to ``epsilon = 1``. A network given
        here is trained with its own settings. Its module must be supported by Opacus
        (no BatchNorm: use GroupNorm), it must use the default criterion, no
        mixup, no ``train_split`` and no callback other than skorch's defaults
        and learning-rate schedules that follow the step count
        (:class:`~sklearn_labeldp.nn.WarmupLinearDecay`, skorch's
        ``LRScheduler`` without ``ReduceLROnPlateau``): every callback sees the
        un-noised training loss. These are checked before any charge.
    epsilon : float, default=1.0
        Target label-DP epsilon of the fit.
    delta : float, default=1e-5
        Target delta in (0, 1).
    max_grad_norm : float, default=1.0
        Clipping norm ``C`` of the per-example gradients.
    accounting : {"rdp", "pld"}, default="deprecated"
        Ignored.

        .. deprecated:: 0.1
           ``accounting`` was deprecated in version 0.1 and will be removed in
           0.3. The label-change guarantee is accounted with privacy loss
           distributions (the only accounting of the replace-one relation
           under Poisson sampling), whatever its value; a value other than
           the default warns with a ``FutureWarning``.
    classes : array-like, default=None
        All possible labels; ``None`` infers them from ``y`` and emits a
        :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`.
    random_state : None, "secure", int, numpy.random.Generator or RandomState, default=None
        Randomness of the batches, the noise and the network's initialisation:
        fresh entropy for every fit with ``None`` or ``"secure"``; an int or
        generator is a replay key, and pickling a model fitted with one warns
        (see :ref:`randomness`).
    accountant : BudgetAccountant, default=None
        Charged with ``(epsilon_, delta_)`` before any label is used.
    verbose : int, default=0
        Above 0, a progress bar (tqdm, when installed) over the epochs: counts
        and times only. The network's own log stays silent (it would show the
        losses on the true labels).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimator_ : LabelDPNetClassifier
        A network with the trained parameter and buffer values and nothing else
        from training (predicting label codes).
    mechanism_params_ : dict
        The parameter ``"max_grad_norm"`` as given and what the run derives
        from it and the network: ``"noise_multiplier"``
        (the calibrated noise std over ``max_grad_norm``), ``"sample_rate"``
        (``q``) and ``"n_noisy_steps"`` (``T``); with the default network
        also the resolved ``"hidden_units"``, ``"batch_size"``, ``"max_epochs"``
        and ``"lr"``.
    batch_size_ : int
        Expected batch size of the training: resolved for the default
        network, the given network's own otherwise.
    max_epochs_ : int
        Epochs of the training, resolved or the given network's.
    lr_ : float
        Learning rate of the training, resolved or the given network's.
    example_epsilon_ : float
        Example-level (add or remove one example) epsilon of the run, at
        ``example_delta_``.
    example_delta_ : float
        Its delta, ``delta``.
    epsilon_ : float
        Label-DP epsilon of the fit (replace one example), ``<= epsilon``.
    delta_ : float
        Label-DP delta, ``delta``.
    privacy_spend_ : PrivacySpend
        A leaf ``"DP-SGD"`` with the run's parameters, its example-level
        guarantee and ``"subsampled_gaussian_label": (noise_multiplier,
        sample_rate, n_noisy_steps)``, the description with which
        :meth:`~sklearn_labeldp.accounting.BudgetAccountant.total` composes it
        exactly.
    n_features_in_ : int
        Number of features seen during fit.

    References
    ----------
    .. [1] M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov,
       K. Talwar, L. Zhang. Deep learning with differential privacy. CCS 2016.
    .. [2] A. Yousefpour et al. Opacus: user-friendly differential privacy
       library in PyTorch. arXiv:2109.12298, 2021.
    .. [3] Y. Zhu, J. Dong, Y.-X. Wang. Optimal accounting of differential
       privacy via characteristic function. AISTATS 2022.
    .. [4] C. J. Lebeda, M. Regehr, G. Kamath, T. Steinke. Avoiding pitfalls
       for privacy accounting of subsampled mechanisms under composition.
       arXiv:2405.20769, 2024.
    .. [5] S. De, L. Berrada, J. Hayes, S. L. Smith, B. Balle. Unlocking
       high-accuracy differentially private image classification through
       scale. arXiv:2204.13650, 2022.
    .. [6] N. Ponomareva et al. How to DP-fy ML: a practical guide to machine
       learning with differential privacy. JAIR 77, 2023.
    .. [7] B. Ghazi, Y. Huang, P. Kamath, R. Kumar, P. Manurangsi, C. Zhang.
       LabelDP-Pro: learning with label differential privacy via projections.
       ICLR 2024.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn_labeldp.nn import DPSGDClassifier, LabelDPNetClassifier, MLP
    >>> X, y = load_digits(return_X_y=True)
    >>> X = X / 16
    >>> net = LabelDPNetClassifier(MLP, max_epochs=3, batch_size=128, lr=0.5)
    >>> clf = DPSGDClassifier(net, epsilon=4.0, classes=range(10), random_state=0).fit(X, y)
    >>> clf.epsilon_ <= 4.0, clf.example_epsilon_ < clf.epsilon_
    (True, True)
    >>> bool(clf.score(X, y) > 0.5)
    True
    """

    # Only the values of the trained module's parameters and buffers are DP-SGD's
    # output: fit returns a network rebuilt around them (_rebuild.py), never the
    # trained one. The paths are the modules' own dicts, at any depth.
    _dp_outputs = (
        "estimator_.module_._parameters.*",
        "estimator_.module_._buffers.*",
        "estimator_.module_._modules.*._parameters.*",
        "estimator_.module_._modules.*._buffers.*",
    )
    # The rest of the rebuilt network is public configuration, not computed from
    # any label: its parameters (those of `estimator`, the seed reset to None),
    # classes_ = arange(K), n_outputs_ = K, target_kind_ = "hard", the device,
    # n_features_in_ / feature_names_in_ of the public X, a freshly initialised
    # module (holding the DP values above), optimizer (no step taken: its
    # param_groups reference the module's parameters, its state is empty),
    # criterion and callbacks (no state from training), and a history of the
    # planned epoch numbers 1..max_epochs. None of it holds a tensor of its own.
    _derived_attributes = (
        *BaseLabelDPMetaClassifier._derived_attributes,
        "example_epsilon_",
        "example_delta_",
        # The training settings: from n and epsilon (default network) or the
        # user's network, never from a label.
        "batch_size_",
        "max_epochs_",
        "lr_",
        "estimator_.classes_",
        "estimator_.n_outputs_",
        "estimator_.target_kind_",
        "estimator_.device_",
        "estimator_.n_features_in_",
        "estimator_.feature_names_in_",
        "estimator_.history_.*.epoch",
    )

    _parameter_constraints: dict = {
        **BaseLabelDPMetaClassifier._parameter_constraints,
        "estimator": [LabelDPNetClassifier, None],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        "verbose": ["verbose"],
        "accounting": [
            StrOptions(set(SUBSAMPLED_GAUSSIAN_METHODS)),
            Hidden(StrOptions({"deprecated"})),
        ],
    }

    def __init__(
        self,
        estimator=None,
        *,
        epsilon=1.0,
        delta=1e-5,
        max_grad_norm=1.0,
        accounting="deprecated",
        classes=None,
        random_state=None,
        accountant=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.epsilon = epsilon
        self.delta = delta
        self.max_grad_norm = max_grad_norm
        self.accounting = accounting
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def _default_estimator(self):
        # The MLP at epsilon <= 1; the fit resolves its settings (_training_settings).
        return LabelDPNetClassifier(MLP, max_epochs=20, batch_size=64, lr=0.1)

    def _expected_failed_checks(self):
        # None: DP-SGD noises the gradients, not each example's label, and its fit
        # passes every check (see sklearn_labeldp.utils.expected_failed_checks).
        return {}

    def _training_settings(self, X, classes):
        """The default network's settings from n, d, K and epsilon; None for a given one."""
        if self.estimator is not None:
            return None
        return default_training(X.shape[0], self.epsilon, int(np.prod(X.shape[1:])),
                                len(classes))

    def _training_network(self, settings):
        """The network to train: the default one with ``settings``, or the user's as given.

        Label-free: a user's network is returned as given (never modified).
        """
        if settings is None:
            return self.estimator
        network = {"module__hidden_units" if name == "hidden_units" else name: value
                   for name, value in settings.items()}
        return self._default_estimator().set_params(**network)

    # No sample_weight: a weighted example would have a larger gradient than the
    # clipping norm covers. The network's parameters are validated by its own fit.
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Train the network with DP-SGD.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric features (protected too: the guarantee covers whole
            examples). Encode other columns beforehand, with a transform whose
            parameters are public: a preprocessor fitted on these private
            features (a scaler's means, an encoder's categories) would release
            them outside the guarantee.
        y : array-like of shape (n_samples,)
            Labels.

        Returns
        -------
        self : object
        """
        return self._fit_or_discard(X, y, lambda X: {})

    def _validate_X(self, X, *, reset, y="no_validation"):
        not_numeric = non_numeric_columns(X)
        if not_numeric:
            raise TypeError(
                f"{type(self).__name__} trains its network on numeric features; X has "
                f"non-numeric columns {not_numeric}. Encode them before it, with "
                "parameters known from public information (e.g. OneHotEncoder("
                "categories=...) and fixed scales): DP-SGD protects the features too, so "
                "a preprocessor fitted on them would release them outside the guarantee."
            )
        return super()._validate_X(X, reset=reset, y=y)

    def _check_network(self, net):
        """Refuse what DP-SGD cannot protect or Opacus cannot clip; label-free."""
        if net.mixup_alpha != 0:
            raise ValueError(
                "DPSGDClassifier: the network's mixup_alpha must be 0: mixup mixes examples, "
                "so a per-example gradient would depend on other examples."
            )
        if net.criterion is not None:
            raise ValueError(
                "DPSGDClassifier: the network's criterion must be None (cross-entropy): the "
                "per-example losses are summed before the noisy average."
            )
        if net.train_split is not None:
            raise ValueError(
                "DPSGDClassifier: the network's train_split must be None: a validation split's "
                "loss is computed without noise and would be released in the history."
            )
        self._check_callbacks(net)

    @staticmethod
    def _check_callbacks(net):
        """Allow only callbacks that neither act on nor send out the un-noised training loss.

        Every callback is told each batch's loss on the private labels, computed
        without noise. One that acts on it (early stopping, ``ReduceLROnPlateau``,
        a checkpoint of the best loss) changes the released weights as a function
        of it, and one that sends it anywhere (a ``PrintLog`` sink other than
        ``print``, which the network's ``verbose=0`` silences) releases it. The
        allowlist is skorch's defaults as configured by default and the
        learning-rate schedules that follow the step count alone.
        """
        probe = clone(net)
        probe.initialize_callbacks()  # as the fit will: callbacks__* parameters applied
        for name, callback in probe.callbacks_:
            kind = type(callback)
            if kind in (EpochTimer, PassthroughScoring, WarmupLinearDecay):
                continue
            if kind is PrintLog and callback.sink is print:
                continue
            if kind is LRScheduler and not _follows_the_loss(callback.policy):
                continue
            raise ValueError(
                f"DPSGDClassifier: the network's callbacks may only be learning-rate schedules "
                f"that follow the step count (WarmupLinearDecay, skorch's LRScheduler without "
                f"ReduceLROnPlateau) besides skorch's defaults; got {name!r} "
                f"({kind.__name__}). Every callback sees the training loss on the private "
                "labels without noise: one acting on it (early stopping, ReduceLROnPlateau, "
                "checkpoints) or sending it out (a PrintLog sink) would release it."
            )

    @staticmethod
    def _sampling(net, n_samples):
        """Poisson rate ``q`` and steps per epoch; a batch as large as the data is ``q = 1``."""
        batch_size = net.batch_size
        if batch_size != -1 and batch_size < 1:
            raise ValueError(
                f"DPSGDClassifier: the network's batch_size (the expected batch size) must be "
                f"-1 or >= 1; got {batch_size}."
            )
        if batch_size == -1 or batch_size >= n_samples:
            return 1.0, 1
        sample_rate = batch_size / n_samples
        return sample_rate, math.ceil(1 / sample_rate)

    def _calibrate(self, sample_rate, steps):
        """Noise multiplier, label-change and example epsilons of the run, before any charge.

        An ``epsilon`` so small that the accountant cannot resolve it (no
        multiplier reaches it, or the run's epsilon computes as 0, which no
        budget can be charged with) is a configuration error of ``epsilon``.
        """
        try:
            return calibrate_dp_sgd_label_change(self.epsilon, self.delta, sample_rate, steps)
        except ValueError as exc:  # label-free: only public quantities went in
            raise ValueError(
                f"DPSGDClassifier: epsilon={self.epsilon!r} is too small for the accountant "
                f"to calibrate {steps} DP-SGD step(s) at sample rate {sample_rate:g} and "
                f"delta={self.delta!r} ({exc}); use a larger epsilon."
            ) from None

    def _warn_deprecated(self):
        if self.accounting != "deprecated":
            warnings.warn(
                "DPSGDClassifier's `accounting` was deprecated in version 0.1 and will be "
                "removed in 0.3; it is ignored: the label-change guarantee is accounted with "
                "privacy loss distributions for the replace-one relation, the only accounting "
                "of it. Leave `accounting` unset to silence this warning.",
                FutureWarning,
                stacklevel=3,
            )

    def _plan_fit(self, X, classes, rng):
        _opacus()  # the extra is needed: say so before anything else
        self._warn_deprecated()
        settings = self._training_settings(X, classes)
        net = self._training_network(settings)
        # The network's own parameter checks first, so that e.g. max_epochs=0 is
        # reported under its name rather than as a number of steps.
        check_params(net)
        self._check_network(net)
        sample_rate, steps_per_epoch = self._sampling(net, X.shape[0])
        steps = net.max_epochs * steps_per_epoch
        denoising = self._denoiser_settings(sample_rate * X.shape[0], X.shape[0])
        noise_multiplier, label_epsilon, example_epsilon = self._calibrate(sample_rate, steps)
        example_delta = self.delta
        if denoising is not None:
            # A denoiser may read features without noise:
            # the label-DP guarantee stands (post-processing), the example one not.
            example_epsilon = math.inf
        params = {
            "noise_multiplier": noise_multiplier,
            "max_grad_norm": float(self.max_grad_norm),
            "sample_rate": sample_rate,
            "n_noisy_steps": steps,
        }
        if denoising is not None:
            params.update(denoising)
        if settings is not None:  # resolved, not given: recorded
            params.update(settings)
        # Recorded with its exact description, checked against the replace-one
        # accounting when the record is built and composed by it in total(slack=...).
        spend = PrivacySpend.leaf(
            "DP-SGD",
            label_epsilon,
            self.delta,
            example_epsilon=example_epsilon,
            example_delta=example_delta,
            description=("subsampled_gaussian_label", (noise_multiplier, sample_rate, steps)),
            **params,
        )
        plan = {
            "params": params,
            "steps_per_epoch": steps_per_epoch,
            "example": (example_epsilon, example_delta),
            "network": net,
        }
        return spend, plan

    def _fit_trial_targets(self, estimator, X, n_classes, fit_params, *, full_size):
        """One short DP-SGD epoch on label-free targets: shapes, device and Opacus support."""
        estimator.set_params(max_epochs=1)
        shell = clone(estimator)
        n_samples = X.shape[0]
        denoising = self._denoiser_settings(0.5 * n_samples, n_samples)
        denoiser = None if denoising is None else self._make_denoiser(
            denoising, 1.0, np.random.default_rng(0), trial=True)
        training = DPSGDTraining(1.0, 1.0, 0.5, 2, n_samples, np.random.default_rng(0),
                                 denoiser=denoiser)
        _train(trial_codes(X.shape[0], n_classes), net=estimator, shell=shell, X=X,
               n_classes=n_classes, training=training)

    def _denoiser_settings(self, expected_batch_size, n_samples):
        """Settings of a denoiser of the noisy gradients, or None (plain DP-SGD); label-free.

        A subclass that post-processes every step's noisy average returns
        them (recorded in ``mechanism_params_``, with a ``"denoiser"`` key
        naming it) and builds the denoiser in :meth:`_make_denoiser`. The
        label-DP record is DP-SGD's; the example-level guarantee is dropped,
        since a denoiser may read features without noise. LabelDP-Pro (Ghazi
        et al. 2024) is one, measured and not offered:
        :mod:`~sklearn_labeldp.nn._labeldp_pro`.
        """
        return None

    def _make_denoiser(self, settings, max_grad_norm, rng, *, trial=False):
        """The denoiser of :meth:`_denoiser_settings`' ``settings``, drawing from ``rng``."""
        raise NotImplementedError

    def _fit_private(self, X, labels, plan, fit_params, mechanism_rng, estimator_rng):
        params = plan["params"]
        denoiser = None
        if "denoiser" in params:
            # Its own stream: it reads no label and no coin of DP-SGD's.
            denoiser = self._make_denoiser(params, params["max_grad_norm"],
                                           spawn_generators(mechanism_rng, 1)[0])
        training = DPSGDTraining(
            params["noise_multiplier"],
            params["max_grad_norm"],
            params["sample_rate"],
            plan["steps_per_epoch"],
            X.shape[0],
            mechanism_rng,
            show_progress=self.verbose > 0,
            denoiser=denoiser,
        )
        # The network with the planned settings (resolved for the default one); it
        # prints nothing: skorch's log shows the non-private batch losses.
        net = seed_estimator(clone(plan["network"]), estimator_rng).set_params(verbose=0)
        net = labels.release(
            _train,
            np.arange(labels.n_samples),
            failure="DPSGDClassifier: DP-SGD training failed after the budget was charged.",
            net=net,
            shell=clone(net),  # cloned before training: no callback of it has run
            X=X,
            n_classes=labels.n_classes,
            training=training,
        )
        example_epsilon, example_delta = plan["example"]
        return {
            "estimator_": net,
            "mechanism_params_": params,
            "example_epsilon_": example_epsilon,
            "example_delta_": example_delta,
            "batch_size_": plan["network"].batch_size,
            "max_epochs_": plan["network"].max_epochs,
            "lr_": float(plan["network"].lr),
        }
