"""ALIBIClassifier: additive noise on the one-hot label plus Bayesian denoising."""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.neighbors import KNeighborsRegressor
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _num_samples, check_is_fitted

from .._base import BaseLabelDPMetaClassifier, trial_codes
from .._target_adapters import (
    check_target_capability,
    fit_soft_targets,
    predict_soft_targets,
    supports_target_refresh,
)
from ..accounting import PrivacySpend, calibrate_gaussian_sigma, gaussian_rho
from ..mechanisms import (
    alibi_posterior,
    gaussian_one_hot,
    gaussian_posterior,
    laplace_one_hot,
    project_to_simplex,
)
from ..utils import progress, row_blocks_on_dask
from ..utils._dask import class_labels, class_probabilities
from ._default_base import NoiseAdaptiveBaseMixin, rr_vote_inflation

__all__ = ["ALIBIClassifier"]


class ALIBIClassifier(NoiseAdaptiveBaseMixin, BaseLabelDPMetaClassifier):
    """Label-DP classifier trained on denoised soft labels (ALIBI, Soft-RR).

    Noise is added once to each one-hot label: Laplace with scale ``2 / eps``
    (eps-label-DP, L1 sensitivity 2) or Gaussian with the least std that makes
    the release (eps, delta)-label-DP by the Gaussian's exact privacy profile
    (Balle and Wang 2018; L2 sensitivity sqrt(2)). The noisy vectors are then
    turned into soft labels, which costs no privacy:

    - ``"bayes"``: the posterior over the label given the noisy vector and a
      prior; round 0 uses the uniform prior and each later round the previous
      model's predicted probabilities on the training inputs (ALIBI);
    - ``"simplex"``: the Euclidean projection onto the probability simplex;
    - ``"argmax"``: the hard label ``argmax_j o_j``.

    Parameters
    ----------
    estimator : regressor or classifier, default=None
        Fitted on the soft labels: a regressor as a multi-output target, a
        classifier through ``sample_weight``, or without it by a reduction (a
        ``KNeighborsClassifier`` as the ``KNeighborsRegressor`` of the same
        neighbourhood, any other on rows replicated in proportion to the soft
        labels; see the target adapters and the ALIBI guide).
        ``None`` means a base resolved at fit time from public quantities: a
        ``HistGradientBoostingClassifier`` where ``n / (K rho^2) >= 150`` and
        ``X`` is dense, else a ``KNeighborsRegressor`` whose ``n_neighbors``
        is ``10 rho`` (rounded) with
        ``rho`` the factor by which K-ary randomized response at the same
        ``epsilon`` inflates a k-NN vote between two classes, capped at
        ``n_samples / (2 n_classes)``; recorded in
        ``mechanism_params_["default_base"]`` and ``["n_neighbors"]``
        (see :ref:`the rule <alibi-default-base>`).
    epsilon : float, default=1.0
        Label-DP epsilon of the fit, > 0 and finite.
    classes : array-like, default=None
        All possible labels; ``None`` infers them from ``y`` and emits a
        :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`.
    noise : {"laplace", "gaussian"}, default="laplace"
    delta : float, default=None
        Required with ``noise="gaussian"``, in (0, 1); must be None otherwise.
    n_rounds : int, default=2
        Model fits; each round after the first refines the posterior with the
        previous model as prior. Only ``post_processing="bayes"`` uses a prior,
        so the other modes need ``n_rounds=1``. A base estimator that trains
        by epochs and has ``fit_soft`` (:class:`sklearn_labeldp.nn.LabelDPNetClassifier`)
        also refreshes the posterior with its current predictions after every
        epoch, so ``n_rounds=1`` is the usual choice for it.
    post_processing : {"bayes", "simplex", "argmax"}, default="bayes"
    verbose : int, default=0
        Above 0, a progress bar (tqdm, when installed) counts the rounds'
        model fits: counts and times only, nothing computed from the labels.
    random_state : None, "secure", int, numpy.random.Generator or RandomState, default=None
        Randomness of the mechanism and of the base estimators' unset seeds:
        fresh entropy for every fit with ``None`` or ``"secure"``, nothing of
        it kept; an int or generator is a replay key, and pickling a model
        fitted with one warns (see :ref:`randomness`).
    accountant : BudgetAccountant, default=None
        Charged with (epsilon, delta) before any label is used.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimator_ : estimator
        The model of the last round; predictions delegate to it.
    estimators_ : list of estimators
        The model of each round.
    soft_labels_ : ndarray of shape (n_samples, n_classes)
        The soft labels the last model was fitted on (post-processing of the
        noisy labels); for a model that refreshes them between epochs, the
        ones its first epoch used.
    mechanism_params_ : dict
        The parameters of the mechanism: ``"noise"`` (``"laplace"`` or
        ``"gaussian"``) and ``"noise_scale"``, the Laplace scale ``b = 2 / epsilon``
        or the Gaussian standard deviation ``s`` calibrated to
        ``(epsilon, delta)``, ``"default_base"`` (the resolved default base's
        class name) and ``"n_neighbors"`` (its ``n_neighbors``, None for the
        trees; both None when ``estimator`` is given).
    epsilon_ : float
    delta_ : float
    privacy_spend_ : PrivacySpend
    n_features_in_ : int
        The final model's, when it has one (as for ``OneVsRestClassifier``).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        The final model's, when it has them (``X`` a DataFrame with string
        column names; ``X`` goes to the base estimator as given).

    References
    ----------
    .. [1] M. Malek, I. Mironov, K. Prasad, I. Shilov, F. Tramer. Antipodes of
       label differential privacy: PATE and ALIBI. NeurIPS 2021.
    .. [2] B. Balle, Y.-X. Wang. Improving the Gaussian mechanism for differential
       privacy: analytical calibration and optimal denoising. ICML 2018.

    Examples
    --------
    >>> from sklearn_labeldp.classifiers import ALIBIClassifier
    >>> from sklearn_labeldp.datasets import make_circle_gaussians
    >>> X, y = make_circle_gaussians(2000, 5, sigma=0.2, random_state=0)
    >>> clf = ALIBIClassifier(epsilon=2.0, classes=range(5), random_state=0).fit(X, y)
    >>> clf.soft_labels_.shape, bool(clf.score(X, y) > 0.8)
    ((2000, 5), True)
    """

    _passes_X_through = True  # X reaches the base estimator as given
    _dp_outputs = ("soft_labels_",)
    _derived_attributes = (
        *BaseLabelDPMetaClassifier._derived_attributes,
        "estimator_",
        "estimators_",
    )

    _parameter_constraints: dict = {
        **BaseLabelDPMetaClassifier._parameter_constraints,
        "noise": [StrOptions({"laplace", "gaussian"})],
        "delta": [Interval(Real, 0, 1, closed="neither"), None],
        "n_rounds": [Interval(Integral, 1, None, closed="left")],
        "post_processing": [StrOptions({"bayes", "simplex", "argmax"})],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        epsilon=1.0,
        classes=None,
        noise="laplace",
        delta=None,
        n_rounds=2,
        post_processing="bayes",
        verbose=0,
        random_state=None,
        accountant=None,
    ):
        self.estimator = estimator
        self.epsilon = epsilon
        self.classes = classes
        self.noise = noise
        self.delta = delta
        self.n_rounds = n_rounds
        self.post_processing = post_processing
        self.verbose = verbose
        self.random_state = random_state
        self.accountant = accountant

    _default_neighbors_class = KNeighborsRegressor
    _trees_min_rows = 150  # soft or bit targets (see _default_base)

    def _vote_inflation(self, n_classes):
        # Its Bayes denoising over two rounds brings ALIBI's targets to about
        # the information of K-ary randomized response at the same epsilon
        # (measured; see _default_base). Not with two classes on few rows, where
        # one round's posteriors need twice RR's votes (user guide, ALIBI).
        return rr_vote_inflation(self.epsilon, n_classes)

    def _fit_trial_targets(self, estimator, X, n_classes, fit_params, *, full_size):
        estimator = self._trial_base(estimator, _num_samples(X), n_classes)
        codes = trial_codes(_num_samples(X), n_classes)
        targets = np.eye(n_classes)[codes]
        if self.post_processing != "argmax":  # soft rows: half on the next class
            targets = 0.5 * (targets + np.eye(n_classes)[(codes + 1) % n_classes])
        fit_soft_targets(estimator, X, targets, fit_params)

    def _plan_fit(self, X, classes, rng):
        if self.post_processing != "bayes" and self.n_rounds > 1:
            raise ValueError(
                f"n_rounds={self.n_rounds} needs post_processing='bayes': only the Bayes "
                "posterior uses the previous model; set n_rounds=1."
            )
        kind = "hard" if self.post_processing == "argmax" else "soft"
        check_target_capability(self._get_estimator(), kind)
        plan = self._plan_base(X, _num_samples(X), classes.size)
        if self.noise == "gaussian":
            if self.delta is None:
                raise ValueError("noise='gaussian' needs delta in (0, 1).")
            # The least noise by the Gaussian's exact privacy profile (Balle and Wang
            # 2018) for the one-hot label's L2 sensitivity sqrt(2); recorded with its
            # description gaussian = sqrt(2) / sigma, which a tight total composes.
            sigma = calibrate_gaussian_sigma(self.epsilon, self.delta, 2.0)
            spend = PrivacySpend.leaf(
                "Gaussian one-hot", self.epsilon, self.delta, sigma=sigma,
                rho=gaussian_rho(math.sqrt(2.0), sigma),
                description=("gaussian", math.sqrt(2.0) / sigma),
            )
            return spend, {**plan, "noise_scale": sigma}
        if self.delta is not None:
            raise ValueError("delta applies to noise='gaussian' only; leave it None.")
        scale = 2.0 / self.epsilon
        # A label change moves two coordinates of the one-hot vector by 1 each, each
        # a Laplace mechanism at epsilon / 2: the exact pair is their product.
        spend = PrivacySpend.laplace(self.epsilon / 2.0, 2, mechanism="Laplace one-hot",
                                     scale=scale)
        return spend, {**plan, "noise_scale": scale}

    def _soft_labels(self, noisy, prior, scale):
        if self.post_processing == "argmax":
            return np.eye(noisy.shape[1])[np.argmax(noisy, axis=1)]
        if self.post_processing == "simplex":
            return project_to_simplex(noisy)
        if self.noise == "gaussian":
            return gaussian_posterior(noisy, sigma=scale, prior=prior)
        return alibi_posterior(noisy, epsilon=self.epsilon, prior=prior)

    def _fit_private(self, X, labels, plan, fit_params, mechanism_rng, estimator_rng):
        scale = plan["noise_scale"]
        mechanism, noise_kw = (
            (gaussian_one_hot, {"sigma": scale})
            if self.noise == "gaussian"
            else (laplace_one_hot, {"epsilon": self.epsilon})
        )
        noisy = labels.release(
            mechanism,
            np.arange(labels.n_samples),
            n_classes=labels.n_classes,
            random_state=mechanism_rng,
            **noise_kw,
        )
        # Everything below is post-processing of `noisy`: the labels are not read again.
        refresh = None
        if self.post_processing == "bayes" and supports_target_refresh(self._get_estimator()):
            # A network refines the posterior with its own current predictions
            # between epochs, always from the same noisy vectors (Malek et al. 2021).
            def refresh(proba):
                return self._soft_labels(noisy, proba, scale)

        prior, estimators = None, []
        rounds = progress(range(self.n_rounds), desc=f"{type(self).__name__} rounds",
                          enabled=self.verbose > 0)
        for round_ in rounds:
            if round_:
                prior = predict_soft_targets(estimators[-1], X, labels.n_classes)
            soft = self._soft_labels(noisy, prior, scale)
            estimator = self._new_base(plan, estimator_rng)
            estimators.append(fit_soft_targets(estimator, X, soft, fit_params, refresh=refresh))
        return {
            "estimator_": estimators[-1],
            "estimators_": estimators,
            "soft_labels_": soft,
            "mechanism_params_": {
                "noise": self.noise, "noise_scale": scale, **self._base_params(plan),
            },
        }

    @row_blocks_on_dask(class_probabilities)
    def predict_proba(self, X):
        """Class probabilities of the last round's model, one column per class.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples, n_classes)
            Lazy, computed block by block of rows, for a dask ``X``.
        """
        check_is_fitted(self)
        return predict_soft_targets(self.estimator_, X, self.classes_.size)

    @row_blocks_on_dask(class_labels)
    def predict(self, X):
        """Predict the most probable class.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples,)
            Lazy, computed block by block of rows, for a dask ``X``.
        """
        proba = self.predict_proba(X)
        return self.classes_.take(np.argmax(proba, axis=1))
