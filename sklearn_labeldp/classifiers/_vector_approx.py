"""VectorApproxClassifier: learn from RAPPOR label vectors (vector approximation)."""

import numpy as np
from sklearn.neighbors import KNeighborsRegressor
from sklearn.utils.validation import _num_samples, check_is_fitted

from .._base import BaseLabelDPMetaClassifier, trial_codes
from .._target_adapters import (
    ReusableTargets,
    TargetReuseMixin,
    check_target_capability,
    fit_bit_targets,
    predict_bit_scores,
)
from ..accounting import PrivacySpend
from ..mechanisms import debias_rappor, rappor, rappor_probabilities
from ..utils._dask import class_labels, class_probabilities, row_blocks_on_dask
from ._default_base import NoiseAdaptiveBaseMixin, rappor_vote_inflation

__all__ = ["VectorApproxClassifier"]


class VectorApproxClassifier(
    NoiseAdaptiveBaseMixin, TargetReuseMixin, BaseLabelDPMetaClassifier
):
    """Label-DP classifier trained on RAPPOR-randomized label vectors.

    Each label ``y`` becomes a vector ``Z`` in ``{0, 1}^K`` whose coordinates are
    independent, ``P(Z_y = 1) = e^(eps/2) / (1 + e^(eps/2))`` and
    ``P(Z_j = 1) = 1 / (1 + e^(eps/2))`` otherwise (eps-label-DP). The base
    estimator learns ``f_j(x) ~ E[Z_j | x]``, which is increasing in
    ``P(y = j | x)``, so ``argmax_j f_j(x)`` is the prediction. Unlike
    randomized response, the signal in each coordinate does not shrink as the
    number of classes grows.

    The bit vectors are held densely, one byte per bit, so a fit takes
    ``n_samples * n_classes`` bytes for them (1 GB for 1e5 examples and 1e4
    classes); :func:`~sklearn_labeldp.mechanisms.rappor` offers a sparse
    output for very many classes at large ``epsilon``.

    Parameters
    ----------
    estimator : regressor or classifier, default=None
        A regressor fits the K coordinates as a multi-output target; a
        classifier with ``predict_proba`` is fitted once per coordinate on the
        binary column. ``None`` means a base resolved at fit time from public
        quantities: a ``HistGradientBoostingClassifier`` per column where ``n
        / (K rho^2) >= 150`` and ``X`` is dense, else a ``KNeighborsRegressor``
        whose ``n_neighbors`` is
        ``10 rho`` (rounded) with ``rho = (1 + t^2) / (2 t^2)``, ``t = tanh(eps / 4)``
        (the factor by which RAPPOR's noise inflates a k-NN vote between two
        classes), capped at ``n_samples / (2 n_classes)``; recorded in
        ``mechanism_params_["default_base"]`` and ``["n_neighbors"]``
        (see :ref:`the rule <vector-approx-default-base>`).
    epsilon : float, default=1.0
        Label-DP parameter of the fit, > 0 and finite.
    classes : array-like, default=None
        All possible labels; ``None`` infers them from ``y`` and emits a
        :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`.
    random_state : None, "secure", int, numpy.random.Generator or RandomState, default=None
        Randomness of the mechanism and of the base estimators' unset seeds:
        fresh entropy for every fit with ``None`` or ``"secure"``, nothing of
        it kept; an int or generator is a replay key, and pickling a model
        fitted with one warns (see :ref:`randomness`).
    accountant : BudgetAccountant, default=None
        Charged with ``epsilon`` before any label is used.
    verbose : int, default=0
        Above 0, a progress bar (tqdm, when installed) counts a classifier
        base's per-class fits: counts and times only, nothing computed from
        the labels.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimator_ : estimator
        The fitted base estimator: the regressor (or a network that learns bit
        vectors natively), or for a classifier base a ``BitColumnClassifiers``
        whose ``estimators_`` hold one fitted classifier per class (a
        coordinate whose privatised bits are all equal is kept as that
        constant).
    privatized_bits_ : ndarray of shape (n_samples, n_classes)
        The RAPPOR bit vector of every training example (a DP output, so
        storing it costs no privacy).
        :class:`~sklearn_labeldp.model_selection.PrivateGridSearchCV` with
        ``strategy="post_processing"`` learns from them again through the
        post-processing protocol of
        :class:`~sklearn_labeldp._target_adapters.TargetReuseMixin`
        (``check_target_reuse``, ``reusable_targets``,
        ``with_final_estimator``).
    mechanism_params_ : dict
        The RAPPOR bit probabilities: ``"p_true"`` (``q+``, a label's own
        coordinate is 1) and ``"p_other"`` (``q-``, any other coordinate is 1),
        ``"default_base"`` (the resolved default base's class name) and
        ``"n_neighbors"`` (its ``n_neighbors``, None for the trees; both None
        when ``estimator`` is given).
    epsilon_ : float
    delta_ : float
        Always 0.
    privacy_spend_ : PrivacySpend
    n_features_in_ : int
        The final model's, when it has one (as for ``OneVsRestClassifier``).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        The final model's, when it has them (``X`` a DataFrame with string
        column names; ``X`` goes to the base estimator as given).

    References
    ----------
    .. [1] P. Zhao, R. Fan, H. Wu, Q. Li, J. Wu, Z. Liu. Enhancing learning
       with label differential privacy by vector approximation. ICLR 2025
       (arXiv:2405.15150, 2024), eqs. 14 and 17.

    Examples
    --------
    >>> from sklearn_labeldp.classifiers import VectorApproxClassifier
    >>> from sklearn_labeldp.datasets import make_circle_gaussians
    >>> X, y = make_circle_gaussians(3000, 10, sigma=0.1, random_state=0)
    >>> clf = VectorApproxClassifier(epsilon=2.0, classes=range(10), random_state=0)
    >>> bool(clf.fit(X, y).score(X, y) > 0.8)
    True
    """

    _parameter_constraints: dict = {
        **BaseLabelDPMetaClassifier._parameter_constraints,
        "verbose": ["verbose"],
    }
    _passes_X_through = True  # X reaches the base estimator as given
    _dp_outputs = ("privatized_bits_",)
    _derived_attributes = (
        *BaseLabelDPMetaClassifier._derived_attributes,
        "estimator_",
    )

    def __init__(self, estimator=None, *, epsilon=1.0, classes=None, random_state=None,
                 accountant=None, verbose=0):
        self.estimator = estimator
        self.epsilon = epsilon
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    _default_neighbors_class = KNeighborsRegressor
    _trees_min_rows = 150  # soft or bit targets (see _default_base)

    def _vote_inflation(self, n_classes):
        return rappor_vote_inflation(self.epsilon)

    def _fit_trial_targets(self, estimator, X, n_classes, fit_params, *, full_size):
        # Two varying columns exercise a per-column classifier without K fits;
        # a regressor still meets all K outputs.
        n_rows = _num_samples(X)
        estimator = self._trial_base(estimator, n_rows, n_classes)
        bits = np.zeros((n_rows, n_classes), dtype=np.int64)
        bits[:, :2] = np.eye(2, dtype=np.int64)[trial_codes(n_rows, 2)]
        fit_bit_targets(estimator, X, bits, fit_params)

    def _plan_fit(self, X, classes, rng):
        check_target_capability(self._get_estimator(), "bits")
        # Described as RAPPOR (two bits move, each at epsilon / 2), so that a tight
        # total composes it exactly rather than as binary randomized response.
        spend = PrivacySpend.rappor(self.epsilon, n_samples=_num_samples(X))
        return spend, self._plan_base(X, _num_samples(X), classes.size)

    def _fit_private(self, X, labels, plan, fit_params, mechanism_rng, estimator_rng):
        bits = labels.release(
            rappor,
            np.arange(labels.n_samples),
            epsilon=self.epsilon,
            n_classes=labels.n_classes,
            random_state=mechanism_rng,
        )
        model = fit_bit_targets(self._new_base(plan, estimator_rng), X, bits, fit_params,
                                verbose=self.verbose)
        p_true, p_other = rappor_probabilities(self.epsilon)
        return {
            "estimator_": model,
            "privatized_bits_": bits,
            "mechanism_params_": {
                "p_true": p_true, "p_other": p_other, **self._base_params(plan),
            },
        }

    # ------------------------------------------ reuse by a post-processing search
    def _reusable_targets(self):
        # ``privatized_bits_``: the bit of the predicted class is 1 with
        # probability q+ = e^(eps/2) / (1 + e^(eps/2)) when the prediction is
        # right and q- = 1 / (1 + e^(eps/2)) when it is wrong. Every fit's
        # bits can be reused: check_target_reuse refuses nothing.
        q_plus, q_minus = rappor_probabilities(self.epsilon_)  # fitted, not the parameter
        return ReusableTargets(self.privatized_bits_, q_plus, q_minus, "bits")

    def _scores(self, X):
        check_is_fitted(self)
        return predict_bit_scores(self.estimator_, X)

    @row_blocks_on_dask(class_labels)
    def predict(self, X):
        """Predict ``argmax_j f_j(x)``, mapped to ``classes_``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples,)
            Lazy, computed block by block of rows, for a dask ``X``.
        """
        scores = self._scores(X)
        return self.classes_.take(np.argmax(scores, axis=1))

    @row_blocks_on_dask(class_probabilities)
    def predict_proba(self, X):
        """Debiased class probabilities ``(f_j - q-) / (q+ - q-)``, clipped, renormalised.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples, n_classes)
            Lazy, computed block by block of rows, for a dask ``X``.
        """
        return debias_rappor(self._scores(X), epsilon=self.epsilon_)
