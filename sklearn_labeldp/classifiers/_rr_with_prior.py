"""RRWithPriorClassifier: LP-MST, multi-stage training with RRWithPrior labels."""

import copy
import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import _num_samples

from .._base import (
    BaseLabelDPMetaClassifier,
    subset_fit_params,
    trial_codes,
)
from .._predict import CodeClassifierPredictMixin
from .._target_adapters import ReusableTargets, TargetReuseMixin
from ..accounting import PrivacyBudget, PrivacySpend
from ..mechanisms import (
    check_prior,
    histogram_prior,
    noisy_label_histogram,
    optimal_top_k,
    rr_with_prior,
    top_k_mask,
)
from ..priors import ClusterPrior, apply_temperature, cluster_assignment, model_prior
from ..utils import derived_random_state, is_dask, progress
from ..utils._logging import logger
from ._default_base import NoiseAdaptiveBaseMixin, rr_vote_inflation

__all__ = ["RRWithPriorClassifier", "auto_stage_fractions", "auto_temperature", "auto_warm_start"]

# The first stage's share of LP-2ST's examples under stage_fractions="auto".
_FIRST_STAGE_SHARE = 0.6


def auto_stage_fractions(n_stages):
    """The stage split of ``stage_fractions="auto"``: a larger first stage.

    With two stages the first gets 60% of the examples: Ghazi et al. (2021,
    appendix on data splits and prior temperature) find that "ratios slightly
    higher than 50% for stage-1 strike the right balance for LP-2ST" (their
    CIFAR-10 run uses 65%). With ``T`` stages the first stage gets 1.2 times an
    even share, ``1.2 / T``, and the others share the rest equally; one stage
    gets everything.

    Parameters
    ----------
    n_stages : int
        Number of stages ``T`` >= 1.

    Returns
    -------
    ndarray of shape (n_stages,)
        Positive fractions that sum to 1.
    """
    if n_stages == 1:
        return np.ones(1)
    first = 2.0 * _FIRST_STAGE_SHARE / n_stages
    rest = np.full(n_stages - 1, (1.0 - first) / (n_stages - 1))
    return np.concatenate([[first], rest])


def auto_temperature(epsilon, n_classes):
    """The prior temperature of ``temperature="auto"``: ``1 - s (1 - s)``.

    ``s = (e^eps - 1) / (e^eps + K - 1)`` is the keep-minus-flip probability
    of K-ary randomized response, the first stage's mechanism. A model fitted
    on randomized labels estimates the noisy-label law ``q + s P(y | x)``,
    flatter than ``P(y | x)`` by a factor ``s`` near the uniform point, which a
    temperature below 1 undoes (Ghazi et al. 2021, appendix on data splits and
    prior temperature, found temperatures below 1 useful and above 1 not).
    How far to trust that sharpening depends on the model too: with little
    signal the stage model is poor, and a sharper prior concentrates
    RRWithPrior on wrong classes (on the digits at eps <= 1 every temperature
    below 1 lost to 1 with a k-NN and a logistic regression base); with
    little noise there is nothing to undo. The rule sharpens most, to 0.75,
    at ``s = 1/2`` and tends to 1 at both ends.

    Parameters
    ----------
    epsilon : float
        The stage epsilon, > 0.
    n_classes : int
        Number of classes ``K``.

    Returns
    -------
    float
        In ``[0.75, 1)``.
    """
    signal = -math.expm1(-epsilon) / (1.0 + (n_classes - 1) * math.exp(-epsilon))
    return 1.0 - signal * (1.0 - signal)


def auto_warm_start(estimator, n_stages):
    """``warm_start="auto"``: start each stage from the previous model where that helps.

    True with more than one stage and a base estimator that has a
    ``warm_start`` parameter (Ghazi et al. 2021 initialise stage 2 with the
    stage-1 model), except scikit-learn's ensembles, whose ``warm_start`` adds
    members to the previous ensemble instead (with an unchanged
    ``n_estimators`` a later stage would then learn nothing new).

    Parameters
    ----------
    estimator : estimator
        The unfitted base estimator.
    n_stages : int

    Returns
    -------
    bool
    """
    if n_stages == 1 or "warm_start" not in estimator.get_params(deep=False):
        return False
    return not type(estimator).__module__.startswith("sklearn.ensemble")


def _refuse_reuse(n_stages, has_prior, prior):
    """Refuse reuse of the privatised labels unless they are plain randomized response."""
    if n_stages != 1 or has_prior:
        raise ValueError(
            "the privatised labels can be reused (strategy='post_processing') with "
            f"n_stages=1 and prior=None only (got n_stages={n_stages!r}, {prior}): the "
            "debiased accuracy assumes plain randomized response. Use strategy='holdout' "
            "instead."
        )


class RRWithPriorClassifier(
    NoiseAdaptiveBaseMixin, TargetReuseMixin, CodeClassifierPredictMixin,
    BaseLabelDPMetaClassifier,
):
    """Label-DP classifier trained on RRWithPrior labels in stages (LP-MST).

    The data is split at random, independently of the labels, into
    ``n_stages`` parts. Stage ``t`` privatises the labels of its part with
    RRWithPrior, using as prior the class probabilities that the stage
    ``t - 1`` model predicts (softened or sharpened by ``temperature``), and
    fits a fresh base estimator on every noisy label obtained so far. Each
    label goes through the mechanism exactly once, so by parallel composition
    the whole fit is ``epsilon``-label-DP. With ``n_stages=1`` and no prior
    this is plain randomized response (LP-1ST).

    With ``prior=ClusterPrior(n_clusters=C, epsilon=eps_p)`` the first stage's
    prior is learnt privately from the labels themselves (Ghazi et al. 2021,
    Alg. 4): k-means groups the examples into ``C`` clusters using the public
    features only (so the groups do not depend on any label), the label
    histogram of every cluster is released with discrete Laplace noise
    (``a = eps_p / 2``, an ``eps_p``-label-DP release of all labels), and each
    example's prior is its cluster's histogram, clipped at 0 and normalised.
    Every label is then read a second time by RRWithPrior, so the stages run
    with the remaining budget ``epsilon - eps_p`` each and, by sequential
    composition, the whole fit is still ``epsilon``-label-DP. Later stages
    use the previous model as prior, as usual.

    Parameters
    ----------
    estimator : classifier, default=None
        Base estimator fitted on the noisy labels of each stage (a regressor is
        refused before any budget is charged); it needs ``predict_proba`` when
        ``n_stages > 1``. ``None`` means a base resolved at fit time from
        public quantities: a ``HistGradientBoostingClassifier`` where ``n /
        (K rho^2) >= 60`` for the first stage's ``n`` rows and a dense ``X``,
        else a ``KNeighborsClassifier`` whose ``n_neighbors`` is
        ``10 rho`` (rounded), with ``rho`` the factor by which K-ary randomized
        response at the stage epsilon inflates a k-NN vote between two classes
        (``coth^2(eps / 2)`` for two classes), capped at ``n / (2 K)`` for the
        first stage's ``n`` rows; recorded in ``mechanism_params_["default_base"]``
        (the class's name) and ``["n_neighbors"]`` (see :ref:`the rule
        <lp-mst-defaults>`).
    epsilon : float, default=1.0
        Label-DP parameter of the whole fit, > 0 and finite.
    classes : array-like, default=None
        All possible labels. ``None`` infers them from ``y`` and emits a
        :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`, because the
        set of labels that occur is itself private.
    n_stages : int, default=1
        Number of stages ``T`` (LP-1ST is RR, LP-2ST, ...).
    stage_fractions : array-like of shape (n_stages,), "auto" or None, default="auto"
        Fraction of the examples in each stage, positive and summing to 1.
        ``None`` splits equally. ``"auto"`` gives the first stage 1.2 times an
        even share (60% of LP-2ST's examples, Ghazi et al. 2021) and splits the
        rest equally (:func:`auto_stage_fractions`); with one stage every
        example is in it. The split used is ``stage_fractions_``.
    temperature : float or "auto", default="auto"
        Prior temperature ``tau``: the prior is ``softmax(log p / tau)`` of the
        previous model's probabilities ``p`` (< 1 sharpens, > 1 flattens).
        ``"auto"``: ``1 - s (1 - s)`` with ``s = (e^eps - 1) / (e^eps + K - 1)``
        the keep-minus-flip probability of the first stage's randomized
        response (:func:`auto_temperature`), which sharpens the flattened
        probabilities of a model fitted on noisy labels (most, to 0.75, at
        ``s = 1/2``), and uses a public or cluster ``prior`` as given. A number
        applies to every prior, the initial one included. The value used for
        the stage models is ``temperature_``.
    prior : array-like of shape (n_samples, n_classes), classifier, ClusterPrior \
            or None, default=None
        Prior for the first stage instead of the uniform one. A
        :class:`~sklearn_labeldp.priors.ClusterPrior`: private noisy label
        histograms of k-means clusters (see above; its ``epsilon`` must be
        < ``epsilon``; ``temperature`` applies to the cluster priors too).
        Otherwise a public prior: an array
        aligned with the rows and the sorted ``classes`` of the training data,
        or a classifier already fitted on public data whose ``predict_proba``
        is used (its classes must be a subset of ``classes``). Temperature
        applies to it as to the stage models. An array is tied to the rows of
        one training set, so it cannot be used inside cross-validation; pass a
        fitted public model there.
    filter_earlier_stages : bool, default=True
        From stage 2 on, drop earlier-stage examples whose noisy label is not
        among the previous model's top ``k_f`` classes, with ``k_f`` the floor
        of the mean ``k*`` of the current stage (Ghazi et al. 2021, Appendix).
    warm_start : bool or "auto", default="auto"
        Start each stage's model from the previous stage's fitted model
        (the base estimator must have a ``warm_start`` parameter) instead of a
        fresh clone. ``"auto"`` does so with ``n_stages > 1`` when the base
        has a ``warm_start`` parameter and is not a scikit-learn ensemble
        (whose ``warm_start`` grows the ensemble instead;
        :func:`auto_warm_start`). The choice used is ``warm_start_``.
    verbose : int, default=0
        Above 0, a progress bar (tqdm, when installed) counts the stages:
        counts and times only, nothing computed from the labels. The package
        logger (``logging.getLogger("sklearn_labeldp")``, level INFO) also
        records the k-means of a cluster prior and each stage's start, with
        their sizes.
    random_state : None, "secure", int, numpy.random.Generator or RandomState, default=None
        Randomness of the mechanism and of the stage split, the k-means seed and
        the base estimators' unset seeds. ``None`` draws 128 bits of fresh
        operating-system entropy for every fit, and nothing derived from it is
        kept on the fitted model. ``"secure"`` does the same with an AES
        counter-mode generator (``pip install 'sklearn-labeldp[secure]'``). An
        int, ``RandomState`` or ``Generator`` is a replay key: the model keeps
        it, and whoever knows it and the features can replay the noise and
        recover the labels, so pickling such a fitted model warns
        (:class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`).
    accountant : BudgetAccountant, default=None
        Charged with the whole spend before any label is used; a fit that does
        not fit the remaining budget raises
        :class:`~sklearn_labeldp.exceptions.BudgetError` and uses no label.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted label set.
    estimator_ : estimator
        The final (last-stage) model; predictions delegate to it.
    estimators_ : list of estimators
        The model of each stage.
    mechanism_params_ : dict
        The parameters of the mechanism: ``"prior"`` (``"none"``,
        ``"given"`` or ``"cluster"``), ``"release_epsilon"``, the epsilon of
        each stage's RRWithPrior (``epsilon``, or ``epsilon - prior.epsilon``
        with a cluster prior), and ``"mean_k"``, an ndarray of shape
        (n_stages,) with the mean ``k*`` of each stage (``n_classes`` for a
        uniform prior; ``k*`` depends on the public prior only), and the
        resolved schedule: ``"stage_fractions"``, ``"temperature"``,
        ``"warm_start"`` (as the attributes below), ``"default_base"`` (the
        resolved default base's class name) and ``"n_neighbors"`` (its
        ``n_neighbors``, None for the trees; both None when ``estimator`` is
        given).
    stage_fractions_ : ndarray of shape (n_stages,)
        The stage split used (``stage_fractions``, or what ``"auto"`` or
        ``None`` resolved to).
    temperature_ : float
        The temperature applied to the stage models' priors.
    warm_start_ : bool
        Whether each stage started from the previous stage's model.
    privatized_labels_ : ndarray of shape (n_samples,)
        The RRWithPrior output of every training example, as label codes
        (indices into ``classes_``). A DP output, so storing it costs no
        privacy; with ``n_stages=1`` and no prior these are plain
        randomized-response labels, which
        :class:`~sklearn_labeldp.model_selection.PrivateGridSearchCV` with
        ``strategy="post_processing"`` learns from again through the
        post-processing protocol of
        :class:`~sklearn_labeldp._target_adapters.TargetReuseMixin`
        (``check_target_reuse``, ``reusable_targets``,
        ``with_final_estimator``).
    cluster_prior_ : ndarray of shape (prior.n_clusters, n_classes)
        Only with a :class:`~sklearn_labeldp.priors.ClusterPrior`: the prior of
        each cluster, computed from the noisy histograms (a DP release, safe to
        publish).
    clusterer_ : KMeans
        Only with a :class:`~sklearn_labeldp.priors.ClusterPrior`: the k-means
        model fitted on the public training features (after
        ``prior.preprocessor``); ``clusterer_.labels_`` holds each example's
        cluster.
    cluster_preprocessor_ : transformer
        Only with a :class:`~sklearn_labeldp.priors.ClusterPrior` that has a
        ``preprocessor``: its clone fitted on the public training features,
        whose output ``clusterer_`` clusters.
    epsilon_ : float
        Label-DP epsilon of the whole fit (with a cluster prior, the total:
        ``prior.epsilon`` plus the stages' ``epsilon - prior.epsilon``).
    delta_ : float
        Always 0: the fit is pure label-DP.
    privacy_spend_ : PrivacySpend
        Structured record: a parallel composition ``"LP-MST"`` of one
        RRWithPrior per stage; the first stage, under no prior or a public one,
        carries ``"randomized_response": (epsilon, k)`` with ``k`` the smallest
        set size >= 2 its prior gives (``K`` without a prior), which a tight
        total composes as k-ary randomized response. With a cluster prior, a
        sequential composition ``"RRWithPrior+cluster prior"`` of the leaf
        ``"noisy label histogram"`` (``prior.epsilon``) and that LP-MST record
        (``epsilon - prior.epsilon``).
    n_features_in_ : int
        The final model's, when it has one (as for ``OneVsRestClassifier``).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        The final model's, when it has them (``X`` a DataFrame with string
        column names). ``X`` is passed to the base estimator as given, so a
        pipeline starting with a ``ColumnTransformer`` selects its columns by
        name or dtype.

    See Also
    --------
    sklearn_labeldp.mechanisms.rr_with_prior : the mechanism of each stage.
    sklearn_labeldp.priors.ClusterPrior : the private cluster prior.
    sklearn_labeldp.mechanisms.noisy_label_histogram : the cluster histograms.

    References
    ----------
    .. [1] B. Ghazi, N. Golowich, R. Kumar, P. Manurangsi, C. Zhang. Deep learning
       with label differential privacy. NeurIPS 2021, Alg. 2, 3 and 4
       (Alg. 4 is the cluster prior).

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_labeldp.classifiers import RRWithPriorClassifier
    >>> from sklearn_labeldp.datasets import make_circle_gaussians
    >>> X, y = make_circle_gaussians(2000, 4, sigma=0.3, random_state=0)
    >>> clf = RRWithPriorClassifier(LogisticRegression(), epsilon=1.0, n_stages=2,
    ...                             classes=[0, 1, 2, 3], random_state=0).fit(X, y)
    >>> clf.epsilon_, float(clf.mechanism_params_["mean_k"][0])
    (1.0, 4.0)
    >>> bool(clf.score(X, y) > 0.8)
    True

    A cluster prior spends its ``epsilon`` of the budget on noisy cluster
    histograms; the reported epsilon is the total:

    >>> from sklearn_labeldp.priors import ClusterPrior
    >>> clf = RRWithPriorClassifier(LogisticRegression(), epsilon=2.0, classes=[0, 1, 2, 3],
    ...                             prior=ClusterPrior(n_clusters=8, epsilon=1.0),
    ...                             random_state=0).fit(X, y)
    >>> clf.epsilon_, clf.cluster_prior_.shape
    (2.0, (8, 4))
    >>> bool(clf.mechanism_params_["mean_k"][0] < 2)
    True
    """

    _passes_X_through = True  # X reaches the base estimator as given
    _dp_outputs = ("privatized_labels_", "cluster_prior_")
    _derived_attributes = (
        *BaseLabelDPMetaClassifier._derived_attributes,
        "estimator_",
        "estimators_",
        "stage_fractions_",  # the resolved schedule: public quantities only
        "temperature_",
        "warm_start_",
        "clusterer_",  # k-means on the public features only
        "cluster_preprocessor_",  # fitted on the public features only
    )

    _parameter_constraints: dict = {
        **BaseLabelDPMetaClassifier._parameter_constraints,
        "n_stages": [Interval(Integral, 1, None, closed="left")],
        "stage_fractions": ["array-like", StrOptions({"auto"}), None],
        "temperature": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "prior": ["array-like", HasMethods(["predict_proba"]), ClusterPrior, None],
        "filter_earlier_stages": ["boolean"],
        "warm_start": ["boolean", StrOptions({"auto"})],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        epsilon=1.0,
        classes=None,
        n_stages=1,
        stage_fractions="auto",
        temperature="auto",
        prior=None,
        filter_earlier_stages=True,
        warm_start="auto",
        verbose=0,
        random_state=None,
        accountant=None,
    ):
        self.estimator = estimator
        self.epsilon = epsilon
        self.classes = classes
        self.n_stages = n_stages
        self.stage_fractions = stage_fractions
        self.temperature = temperature
        self.prior = prior
        self.filter_earlier_stages = filter_earlier_stages
        self.warm_start = warm_start
        self.verbose = verbose
        self.random_state = random_state
        self.accountant = accountant

    def _vote_inflation(self, n_classes):
        # The first stage, the one the default base's size is resolved for, is
        # K-ary randomized response at the stage epsilon.
        return rr_vote_inflation(self._stage_epsilon(), n_classes)

    def _stage_epsilon(self):
        return self.epsilon - self.prior.epsilon if self._uses_cluster_prior() else self.epsilon

    def _trial_rows(self, plan):
        # The first stage is the smallest training set a stage model sees.
        return plan["stages"][0].size

    def _fit_trial_targets(self, estimator, X, n_classes, fit_params, *, full_size):
        estimator = self._trial_base(estimator, _num_samples(X), n_classes)
        estimator.fit(X, trial_codes(_num_samples(X), n_classes), **fit_params)
        if self.n_stages > 1 and full_size:
            # A stage model as small as the first one must give the next prior
            # (e.g. a k-NN needs n_neighbors <= its training rows).
            estimator.predict_proba(_safe_indexing(X, [0]))

    def _stage_fractions(self):
        """The stage split: the user's fractions, an even split for None, or the rule."""
        if isinstance(self.stage_fractions, str):  # "auto"
            return auto_stage_fractions(self.n_stages)
        if self.stage_fractions is None:
            fractions = np.full(self.n_stages, 1.0 / self.n_stages)
        else:
            fractions = np.asarray(self.stage_fractions, dtype=np.float64)
            if fractions.shape != (self.n_stages,):
                raise ValueError(
                    f"stage_fractions must have one entry per stage ({self.n_stages}); "
                    f"got shape {fractions.shape}."
                )
            if not np.all(np.isfinite(fractions) & (fractions > 0)):
                raise ValueError("stage_fractions must be finite and > 0.")
            if abs(fractions.sum() - 1.0) > 1e-6:
                raise ValueError(
                    f"stage_fractions must sum to 1; they sum to {fractions.sum():.6g}."
                )
        return fractions

    def _stage_sizes(self, fractions, n_samples):
        bounds = np.round(np.cumsum(fractions) * n_samples).astype(np.intp)
        bounds[-1] = n_samples
        sizes = np.diff(bounds, prepend=0)
        if (sizes < 1).any():
            raise ValueError(
                f"n_stages={self.n_stages} with stage_fractions={fractions.tolist()} "
                f"leaves a stage without examples for n_samples={n_samples}; use fewer "
                "stages or more data."
            )
        return sizes

    def _uses_cluster_prior(self):
        return isinstance(self.prior, ClusterPrior)

    def _check_cluster_prior(self, n_samples):
        """Check a ``ClusterPrior``'s parameters against ``epsilon`` and the data; public only."""
        # The classifier's own validation does not descend into its parameters.
        self.prior._validate_params()
        if not self.prior.epsilon < self.epsilon:
            raise ValueError(
                f"prior.epsilon={self.prior.epsilon!r} (ClusterPrior(epsilon=...)) must be "
                f"< epsilon={self.epsilon!r}: the rest of epsilon pays for RRWithPrior."
            )
        if self.prior.n_clusters > n_samples:
            raise ValueError(
                f"prior.n_clusters={self.prior.n_clusters} > n_samples={n_samples}: k-means "
                "needs at least one example per cluster; use ClusterPrior(n_clusters=...) "
                "with fewer clusters, or more data."
            )

    def _temperature(self, n_classes):
        """The temperature of the stage models' priors: the user's, or the rule."""
        if isinstance(self.temperature, str):  # "auto"
            return auto_temperature(self._stage_epsilon(), n_classes)
        return float(self.temperature)

    def _initial_temperature(self):
        # "auto" uses a public or cluster prior as given: the rule corrects the
        # flattening of a model fitted on randomized labels, which they are not.
        return 1.0 if isinstance(self.temperature, str) else float(self.temperature)

    def _warm_start(self):
        """Whether each stage starts from the previous model: the user's choice, or
        the rule (see :func:`auto_warm_start`)."""
        if isinstance(self.warm_start, str):  # "auto"
            return auto_warm_start(self._get_estimator(), self.n_stages)
        return bool(self.warm_start)

    def _initial_prior(self, X, classes):
        if self.prior is None or self._uses_cluster_prior():
            return None
        if hasattr(self.prior, "predict_proba"):
            prior = check_prior(model_prior(self.prior, X, classes))
        else:
            prior = check_prior(self.prior, n_samples=_num_samples(X))
            if prior.shape[1] != classes.size:
                raise ValueError(
                    f"prior has {prior.shape[1]} columns but there are {classes.size} "
                    "classes; give one column per entry of the sorted `classes`."
                )
        return apply_temperature(prior, self._initial_temperature())

    def _stage_spend(self, stage, size, plan, n_classes):
        """The spend record of one stage.

        RRWithPrior keeps each label within its prior's top-``k`` set (Ghazi et
        al. 2021). For an example whose set has ``k >= 2`` classes, a label
        change within the set gives k-ary randomized response's pair of output
        laws, and one into or out of the set a pair it dominates (the uniform
        law on the set is the mean of the set's randomized-response laws, and
        hockey-stick divergences are jointly convex); k-ary randomized
        response's divergences ``(e^eps - e^eps') / (e^eps + k - 1)`` decrease
        with ``k``, and an example with ``k = 1`` releases nothing about its
        label. A stage is therefore dominated by k-ary randomized response at
        the smallest ``k >= 2`` it uses, recorded as that description so that
        a tight total (:meth:`BudgetAccountant.total` with a ``slack``)
        composes it as such. The sizes depend on the prior only, known before
        any label is read for the first stage: without a prior every set is all
        ``K`` classes (exactly K-ary randomized response), with a public prior
        (numpy) its rows' optimal ``k``. Later stages' priors are earlier
        stages' models and a cluster prior is a DP histogram, neither known
        when the fit is charged: those stages are generic ``epsilon``-DP leaves
        (composed as binary randomized response, the worst case).
        """
        epsilon = plan["release_epsilon"]
        prior = plan["initial_prior"]
        if stage == 0 and not self._uses_cluster_prior() and not is_dask(prior):
            smallest = n_classes
            if prior is not None:
                sizes = optimal_top_k(prior[plan["stages"][0]], epsilon=epsilon)
                sizes = sizes[sizes >= 2]
                smallest = int(sizes.min()) if sizes.size else n_classes
            return PrivacySpend.randomized_response(
                epsilon, smallest, mechanism="RRWithPrior", stage=stage, n_samples=size,
            )
        return PrivacySpend.leaf("RRWithPrior", epsilon, stage=stage, n_samples=size)

    def _plan_fit(self, X, classes, rng):
        if not is_classifier(self._get_estimator()):
            # A regressor fits the integer codes without complaint and predicts
            # numbers between them, which no class of `classes` stands for: refused
            # here, before the charge, as the trial fit would accept it.
            raise ValueError(
                f"{type(self).__name__}: `estimator` must be a classifier, fitted on the "
                f"noisy hard labels of each stage; got {type(self._get_estimator()).__name__}, "
                "which is not one (sklearn.base.is_classifier). For a regressor base use "
                "ALIBIClassifier or VectorApproxClassifier."
            )
        if (not isinstance(self.warm_start, str) and self.warm_start
                and "warm_start" not in self._get_estimator().get_params()):
            raise ValueError(
                f"warm_start=True needs a base estimator with a warm_start parameter; "
                f"{type(self._get_estimator()).__name__} has none."
            )
        if self.n_stages > 1 and not hasattr(self._get_estimator(), "predict_proba"):
            raise ValueError(
                "n_stages > 1 needs a base estimator with predict_proba to build the "
                "priors of later stages."
            )
        n_samples = _num_samples(X)
        fractions = self._stage_fractions()
        sizes = self._stage_sizes(fractions, n_samples)
        if self._uses_cluster_prior():
            self._check_cluster_prior(n_samples)
        plan = {
            "stages": np.split(rng.permutation(n_samples), np.cumsum(sizes)[:-1]),
            "initial_prior": self._initial_prior(X, classes),
            "release_epsilon": self._stage_epsilon(),
            "prior_kind": ("none" if self.prior is None
                           else "cluster" if self._uses_cluster_prior() else "given"),
            "stage_fractions": fractions,
            "temperature": self._temperature(classes.size),
            "warm_start": self._warm_start(),
            # The first stage is the smallest training set a stage model sees.
            **self._plan_base(X, int(sizes[0]), classes.size),
        }
        if self._uses_cluster_prior():
            # k-means sees the public features only: the groups, and so the
            # histogram's sensitivity, do not depend on any label.
            features, plan["cluster_preprocessor"] = self.prior.cluster_features(X)
            logger.info("%s: k-means of the cluster prior, %d clusters on %d rows",
                        type(self).__name__, self.prior.n_clusters, n_samples)
            plan["clusterer"], plan["groups"] = cluster_assignment(
                features, self.prior.n_clusters, random_state=derived_random_state(rng)
            )
        spend = PrivacySpend.compose(
            "LP-MST",
            [
                self._stage_spend(t, int(size), plan, classes.size)
                for t, size in enumerate(sizes)
            ],
            "parallel",
            n_stages=self.n_stages,
        )
        if self._uses_cluster_prior():
            histogram = PrivacySpend.leaf(
                "noisy label histogram", self.prior.epsilon, n_clusters=self.prior.n_clusters
            )
            # Sequential composition: every label is read by the histogram and
            # again by its stage. The record's budget is ``epsilon`` itself;
            # PrivacySpend checks that it covers the parts' sum (which may
            # differ from it by a rounding error).
            spend = PrivacySpend(
                "RRWithPrior+cluster prior",
                PrivacyBudget(self.epsilon),
                {"prior_epsilon": self.prior.epsilon, "n_clusters": self.prior.n_clusters},
                "sequential",
                (histogram, spend),
            )
        return spend, plan

    def _prior(self, model, plan, X, indices, n_classes):
        """The public prior of ``indices``: the previous model's, the initial one, or
        ``None`` for the uniform prior (plain randomized response, in O(n) memory)."""
        if model is not None:
            proba = model_prior(model, _safe_indexing(X, indices), np.arange(n_classes))
            return apply_temperature(proba, plan["temperature"])
        if plan["initial_prior"] is not None:
            return plan["initial_prior"][indices]
        return None

    def _next_estimator(self, previous, labels_seen, plan, rng):
        if plan["warm_start"] and previous is not None:
            if np.array_equal(previous.classes_, labels_seen):
                return copy.deepcopy(previous)
            # Models such as LogisticRegression cannot warm-start across a change
            # of the label set; this stage starts cold instead (silently when the
            # rule, not the user, asked for a warm start).
            if not isinstance(self.warm_start, str):
                warnings.warn(
                    "warm_start: the noisy labels of this stage cover other classes than "
                    "the previous model's, so this stage's model is fitted from scratch.",
                    UserWarning,
                    stacklevel=4,
                )
        estimator = self._new_base(plan, rng)
        if plan["warm_start"]:
            estimator.set_params(warm_start=True)
        return estimator

    def _cluster_prior(self, labels, plan, mechanism_rng):
        """Noisy per-cluster label histograms (the first release) and their priors."""
        counts = labels.release(
            noisy_label_histogram,
            np.arange(labels.n_samples),
            failure=(
                f"{type(self).__name__}: the noisy cluster histograms of the prior "
                "(ClusterPrior) failed after the budget was charged; the details are "
                "withheld because they may depend on the labels, and the budget stays spent."
            ),
            privacy_cost=self.prior.epsilon,
            groups=plan["groups"],
            epsilon=self.prior.epsilon,
            n_classes=labels.n_classes,
            n_groups=self.prior.n_clusters,
            random_state=mechanism_rng,
        )
        return histogram_prior(counts)

    # ------------------------------------------ reuse by a post-processing search
    def check_target_reuse(self):
        """Raise ``ValueError`` unless the privatised labels can be learnt from again.

        Part of the post-processing protocol
        (:class:`~sklearn_labeldp._target_adapters.TargetReuseMixin`): the
        debiased accuracy of
        :class:`~sklearn_labeldp.model_selection.PrivateGridSearchCV` with
        ``strategy="post_processing"`` needs plain randomized response
        (``n_stages=1``, ``prior=None``).
        """
        _refuse_reuse(self.n_stages, self.prior is not None, f"prior={self.prior!r}")

    def _check_fitted_target_reuse(self):
        # The fitted release's own settings, not the parameters (set_params after fit).
        params = self.mechanism_params_
        _refuse_reuse(len(params["stage_fractions"]), params["prior"] != "none",
                      f"a {params['prior']} prior")

    def _reusable_targets(self):
        # ``privatized_labels_``: a prediction agrees with one with probability
        # p = e^eps / (e^eps + K - 1) when it is right and p * e^-eps when it is
        # wrong, the law of randomized_response, written with e^-eps so it never
        # overflows.
        # The fitted stage's epsilon, not the parameter (set_params after fit).
        epsilon, n_classes = self.mechanism_params_["release_epsilon"], self.classes_.size
        keep = 1.0 / (1.0 + (n_classes - 1) * np.exp(-epsilon))
        return ReusableTargets(self.privatized_labels_, keep, keep * np.exp(-epsilon), "hard")

    def _set_final_estimator(self, model):
        self.estimator_, self.estimators_ = model, [model]

    def _fit_private(self, X, labels, plan, fit_params, mechanism_rng, estimator_rng):
        n_samples, n_classes = labels.n_samples, labels.n_classes
        fitted = {}
        # Each release states its per-example cost. Plain LP-MST reads each label
        # once at the whole epsilon; with a cluster prior every label is read twice
        # (histogram, then its stage), and PrivateLabels checks that the costs add
        # up to at most the planned total (sequential composition).
        if self._uses_cluster_prior():
            cluster_prior = self._cluster_prior(labels, plan, mechanism_rng)
            plan = {
                **plan,
                "initial_prior": apply_temperature(
                    cluster_prior[plan["groups"]], self._initial_temperature()
                ),
            }
            fitted = {"cluster_prior_": cluster_prior, "clusterer_": plan["clusterer"]}
            if plan["cluster_preprocessor"] is not None:
                fitted["cluster_preprocessor_"] = plan["cluster_preprocessor"]
        noisy = np.empty(n_samples, dtype=np.int64)
        estimators, stage_k = [], []
        model = None
        stages = progress(enumerate(plan["stages"]), total=len(plan["stages"]),
                          desc=f"{type(self).__name__} stages", enabled=self.verbose > 0)
        for t, indices in stages:
            logger.info("%s: stage %d of %d, %d examples", type(self).__name__, t + 1,
                        self.n_stages, indices.size)
            noisy[indices], k = labels.release(
                rr_with_prior,
                indices,
                failure=(
                    f"{type(self).__name__}: RRWithPrior failed on stage {t + 1} of "
                    f"{self.n_stages} after the budget was charged; the details are "
                    "withheld because they may depend on the labels, and the budget "
                    "stays spent."
                ),
                prior=self._prior(model, plan, X, indices, n_classes),
                n_classes=n_classes,
                epsilon=plan["release_epsilon"],
                random_state=mechanism_rng,
                return_k=True,
                privacy_cost=plan["release_epsilon"],
            )
            stage_k.append(k.mean())
            earlier = np.concatenate([np.empty(0, np.intp), *plan["stages"][:t]])
            if model is not None and self.filter_earlier_stages:
                k_f = int(np.floor(k.mean()))  # >= 1, as every k* is
                in_top = top_k_mask(self._prior(model, plan, X, earlier, n_classes), k_f)
                earlier = earlier[in_top[np.arange(earlier.size), noisy[earlier]]]
            train = np.concatenate([earlier, indices])
            model = self._next_estimator(model, np.unique(noisy[train]), plan, estimator_rng)
            model.fit(
                _safe_indexing(X, train),
                noisy[train],
                **subset_fit_params(fit_params, train, n_samples),
            )
            estimators.append(model)
        return {
            **fitted,
            "estimator_": model,
            "estimators_": estimators,
            "mechanism_params_": {
                "prior": plan["prior_kind"],
                "release_epsilon": plan["release_epsilon"],
                "mean_k": np.array(stage_k),
                "stage_fractions": plan["stage_fractions"],
                "temperature": plan["temperature"],
                "warm_start": plan["warm_start"],
                **self._base_params(plan),
            },
            "stage_fractions_": plan["stage_fractions"],
            "temperature_": plan["temperature"],
            "warm_start_": plan["warm_start"],
            "privatized_labels_": noisy,
        }
