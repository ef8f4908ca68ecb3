"""NoisyLabelRegressor: any regressor fitted on labels released by a label randomizer.

The randomizers are those of Ghazi et al. (2023) for regression with label DP:
RR-on-Bins, their optimum under a prior, and the baselines (Laplace, Gaussian
and staircase noise on labels clipped to the public range), with the optimal
unbiased randomizer of Badanidiyuru et al. (2023). The prior of the first two
is public, or a DP histogram of the labels that spends part of the budget.
"""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import MetaEstimatorMixin, _fit_context, clone, is_classifier
from sklearn.neighbors import KNeighborsRegressor
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import (
    _num_samples,
    check_is_fitted,
    has_fit_parameter,
    indexable,
)

from .._base import (
    _TRIAL_ROWS,
    check_sample_weight,
    quick_trial,
    seed_estimator,
    subset_fit_params,
    trial_fit,
    trial_rows,
)
from .._neighbors import CLEAN_NEIGHBORS
from .._neighbors import default_n_neighbors as shared_n_neighbors
from .._target_adapters import (
    REAL_CORRECTIONS,
    ReusableRealTargets,
    TargetReuseMixin,
    affine_debias,
)
from ..accounting import PrivacyBudget, PrivacySpend
from ..utils import check_value_prior
from ..utils._dask import real_values, row_blocks_on_dask
from ..utils._estimator_checks import meta_estimator_failures
from ._base import BaseLabelDPRegressor
from ._priors import auto_prior_size, label_grid, value_histogram
from ._randomizers import (
    AUTO_DEBIAS_MIN_EFFECTIVE_SAMPLES,
    RANDOMIZERS,
    RandomizerSetting,
    release_moments,
    resolve_debias,
)

__all__ = ["NoisyLabelRegressor", "auto_mechanism", "auto_prior_epsilon",
           "auto_unbiased_min_rows", "default_n_neighbors"]

# The share of epsilon that buys the DP histogram prior when prior_epsilon="auto",
# and the larger share when even two-output randomized response at the rest of
# epsilon would tell the model little (auto_prior_epsilon).
AUTO_PRIOR_SHARE = 0.1
AUTO_PRIOR_SHARE_WEAK = 0.3


def auto_prior_epsilon(epsilon, n_samples):
    """``prior_epsilon="auto"``: the DP histogram's share of ``epsilon``, from public n and eps.

    ``0.1 epsilon``, unless the release at the rest of epsilon is weak: when
    ``n tanh(0.9 epsilon / 2)^2`` (the effective sample size ``n (p - q)^2``
    of randomized response with two outputs, the most any RR-on-Bins release
    keeps) is below :data:`AUTO_DEBIAS_MIN_EFFECTIVE_SAMPLES` (50), the model
    learns mostly the prior it shrinks to, and the prior gets ``0.3 epsilon``.
    Measured, median test MSE over the training mean's (9 splits, 70/30,
    default k-NN base): the diabetes data (309 training rows) at eps 0.5, 1.134
    -> 1.017; Friedman #1/#3 (301 rows) at eps 0.5, 1.036 -> 0.982 and 1.025
    -> 0.998, #2 0.992 -> 0.996; where the rule keeps 0.1 (eps >= 1 there) the
    larger share cost 2-24%.

    Parameters
    ----------
    epsilon : float
    n_samples : int

    Returns
    -------
    float
    """
    effective = n_samples * math.tanh((1.0 - AUTO_PRIOR_SHARE) * epsilon / 2.0) ** 2
    weak = effective < AUTO_DEBIAS_MIN_EFFECTIVE_SAMPLES
    return (AUTO_PRIOR_SHARE_WEAK if weak else AUTO_PRIOR_SHARE) * epsilon


# The default base: a k-NN of CLEAN_NEIGHBORS * rho neighbours (rho, the
# randomizer's vote_inflation), at most n / 4 of them (the classifiers' rule for
# two classes, sklearn_labeldp._neighbors).
# mechanism="auto" takes the unbiased randomizer only where its noise is worth
# averaging out (rho of at least AUTO_UNBIASED_MIN_INFLATION; below, both errors
# are small and RR-on-Bins stays) and can be: its k-NN within n / AUTO_UNBIASED_ROWS_PER_VOTE
# rows (the cap of the k rule, so that k is never capped there), and at least
# AUTO_UNBIASED_ROWS_PER_SQUARED_INFLATION rho^2 rows (below eps 0.61, where
# the k-NN's wide neighbourhoods cost more than RR-on-Bins' rounding; see
# auto_mechanism).
AUTO_UNBIASED_MIN_INFLATION = 1.5
AUTO_UNBIASED_ROWS_PER_VOTE = 4
AUTO_UNBIASED_ROWS_PER_SQUARED_INFLATION = 1.25


def default_n_neighbors(n_samples, inflation):
    """The default base's ``n_neighbors``: ``10 rho`` (rounded), capped at ``n / 4``, at least 1.

    ``rho`` is the randomizer's vote inflation (the ``vote_inflation`` of its
    row in :data:`~sklearn_labeldp.regression._randomizers.RANDOMIZERS`), a
    function of its epsilon and public parameters: for the unbiased
    releases (the optimal unbiased randomizer, Laplace, Gaussian, staircase)
    ``1 + 12 sigma^2``, with ``sigma^2`` the noise variance per squared width
    of the range (for the unbiased randomizer, before its prior is known,
    :func:`~sklearn_labeldp.regression._moments.two_output_variance`): ``k``
    releases then average to the variance of 10 clean labels spread evenly
    over the range. For RR-on-Bins, ``coth(eps / 2)``: the square root of
    the factor ``coth^2(eps / 2)`` that the classifiers' default base gives
    two-class randomized response, since its bins follow the prior: over the
    66 cells of ``benchmarks/regression_defaults.py --table neighbours``
    (Friedman #1/#2/#3, a sine and a linear set of 300 and 2,000 rows and the
    diabetes data, eps 0.25 to 8, 9 seeds), RR-on-Bins' test MSE at this
    ``k`` was on average 1.4% above that at the best ``k`` (at most 12%),
    against 2.6% at ``k = 10`` (the former default) and 2.8% at the full
    factor. For the unbiased randomizer, where ``mechanism="auto"`` takes
    it, 12% (at most 59%, on Friedman #2, whose smooth target wants more).
    The cap ``n / 4`` is the classifiers' ``n / (2 K)`` for two classes.

    Parameters
    ----------
    n_samples : int
        Rows the base is fitted on.
    inflation : float
        ``rho >= 1``.

    Returns
    -------
    int
    """
    return shared_n_neighbors(n_samples, 2, inflation)


def auto_unbiased_min_rows(release_epsilon):
    """The fewest rows from which ``mechanism="auto"`` takes the unbiased randomizer at ``eps``.

    ``max(40 rho, 1.25 rho^2)`` with ``rho = 1 + 12 v(eps)`` (see
    :func:`auto_mechanism`), or infinity where ``rho < 1.5``.

    Parameters
    ----------
    release_epsilon : float
        The unbiased randomizer's epsilon.

    Returns
    -------
    float
    """
    setting = RandomizerSetting(release_epsilon, 0.0, (0.0, 1.0), "squared")
    inflation = RANDOMIZERS["unbiased"].vote_inflation(setting, {})
    if not inflation >= AUTO_UNBIASED_MIN_INFLATION:
        return math.inf
    return max(AUTO_UNBIASED_ROWS_PER_VOTE * CLEAN_NEIGHBORS * inflation,
               AUTO_UNBIASED_ROWS_PER_SQUARED_INFLATION * inflation ** 2)


def auto_mechanism(n_samples, release_epsilon):
    """``mechanism="auto"`` with the default base: the randomizer, from public n and eps.

    ``"unbiased"`` (the optimal unbiased randomizer of Badanidiyuru et al.
    2023) when its vote inflation ``rho = 1 + 12 v(eps)`` (``v``:
    :func:`~sklearn_labeldp.regression._moments.two_output_variance` at its
    epsilon) is at least 1.5 and ``n >= max(40 rho, 1.25 rho^2)``
    (:func:`auto_unbiased_min_rows`); ``"rr_on_bins"`` (Ghazi et al. 2023)
    otherwise. RR-on-Bins' releases have the least error but stand for the
    value of the label's bin, whose rounding a model keeps however many rows
    it averages (at eps 1 it has two bins); the unbiased releases are far
    noisier but have mean ``y``, and a k-NN of enough rows averages the
    noise away. The two conditions on ``n``:

    - ``40 rho``: the k-NN's ``10 rho`` neighbours take at most a quarter of
      the rows (the cap of :func:`default_n_neighbors`, which then never
      binds). The former ``n / 6`` left RR-on-Bins' rounding where it costs
      most: Friedman #2 at eps 1 reached 3.07 to 3.47 times the test MSE of
      :class:`~sklearn_labeldp.DPLeastSquaresRegressor` with 500 to 700 rows
      (9 seeds), 1.46 to 1.84 times with the unbiased randomizer.
    - ``1.25 rho^2``, which binds below eps 0.61 (``rho > 32``): there the
      ``10 rho`` neighbours are so many that the k-NN's neighbourhoods are
      too wide for a target that varies (a sine of 2,000 rows at eps 0.5 went
      to 1.12 times the training mean's error with ``n / 4``, against 0.83
      with RR-on-Bins); it keeps the former boundary at eps 0.5 (2,882 rows).

    Where ``rho < 1.5`` (``eps`` above 3.26) RR-on-Bins stays: both errors
    are small there (on the benchmark's cells at eps 4 and 8 the unbiased
    randomizer's test MSEs were 8% and 4% lower on average, but up to 12%
    higher, on a 1-d sine at eps 4). The unbiased randomizer is taken at
    eps 2 from 127 rows, 1 from 482, 0.75 from 855, 0.5 from 2,882; with
    1,000 rows from eps 0.69 to 3.26.
    Measured in ``benchmarks/regression_defaults.py`` (see the user guide).

    Parameters
    ----------
    n_samples : int
    release_epsilon : float
        The unbiased randomizer's epsilon: the fit's, less a DP prior's.

    Returns
    -------
    {"unbiased", "rr_on_bins"}
    """
    return "unbiased" if n_samples >= auto_unbiased_min_rows(release_epsilon) else "rr_on_bins"


class NoisyLabelRegressor(TargetReuseMixin, MetaEstimatorMixin, BaseLabelDPRegressor):
    """A regressor fitted on real labels privatised by a label randomizer.

    Every label, clipped to the public ``label_range``, goes once through the
    chosen eps-label-DP randomizer, and a clone of ``estimator`` is fitted on
    the released labels: the model is post-processing of the release, so the
    fit is eps-label-DP (Ghazi et al. 2023).

    - ``"rr_on_bins"``: RR-on-Bins
      (:func:`~sklearn_labeldp.mechanisms.rr_on_bins`), the randomizer of
      least expected squared (or absolute, ``loss``) error under a prior over
      the labels, among all eps-label-DP randomizers.
    - ``"unbiased"``: the optimal unbiased randomizer of Badanidiyuru et al.
      (2023) (:func:`~sklearn_labeldp.mechanisms.unbiased_randomizer`):
      ``E[release] = y``, with the least variance under the prior.
    - ``"laplace"``, ``"gaussian"``, ``"staircase"``: additive noise on the
      clipped labels (:func:`~sklearn_labeldp.mechanisms.laplace_label`,
      :func:`~sklearn_labeldp.mechanisms.gaussian_label` at ``(epsilon,
      delta)``, :func:`~sklearn_labeldp.mechanisms.staircase_label`); no prior.
    - ``"auto"`` (default): ``"rr_on_bins"`` with a given ``estimator``; with
      the default one, a rule of the public ``n`` and ``epsilon``
      (:func:`auto_mechanism`): the unbiased randomizer under a uniform public
      prior where a k-NN can average its noise away (``n >= max(40 rho,
      1.25 rho^2)``: ``10 rho`` neighbours within ``n / 4`` rows, and more
      rows below eps 0.61; ``rho = 1 + 12 v(eps) >= 1.5``, where ``v =
      e^eps / (e^eps - 1)^2`` is the variance of debiased two-output
      randomized response per squared range width), RR-on-Bins elsewhere.
      RR-on-Bins' releases have the least error but stand for their bin's
      value, a rounding that a model keeps however many rows it averages;
      the unbiased releases have mean ``y`` (Badanidiyuru et al. 2023). On
      Friedman #2 with 2,000 training rows at eps 1 the default's test MSE
      went from 4.6 to 2.1 times that of
      :class:`~sklearn_labeldp.DPLeastSquaresRegressor`, with 600 rows from
      3.3 to 1.5 (see the user guide).

    With ``estimator=None`` the base is a ``KNeighborsRegressor`` whose
    ``n_neighbors`` follows the release's noise (:func:`default_n_neighbors`):
    ``10 rho``, at most ``n / 4``, with ``rho`` the factor by which the
    randomizer's noise multiplies the neighbours that clean labels need
    (``1 + 12 sigma^2`` for an unbiased release of noise variance ``sigma^2``
    per squared range width, ``coth(eps / 2)`` for RR-on-Bins). The rules
    read public quantities only (``n``, ``epsilon``, ``delta``, the label
    range and the randomizer's planned parameters), never the labels.

    The prior of the first two is ``prior`` when given (public), or else a DP
    histogram of the labels rounded to ``n_prior_values`` evenly spaced
    values of the range, released with discrete Laplace noise at
    ``prior_epsilon``; the randomizer then runs at ``epsilon -
    prior_epsilon`` and, by sequential composition, the fit is
    ``epsilon``-label-DP. Where ``mechanism="auto"`` resolves to the unbiased
    randomizer with ``prior_epsilon="auto"``, its prior is instead the uniform
    one over ``n_prior_values`` evenly spaced values of the range: public, so
    the randomizer keeps all of ``epsilon``.

    The released labels can be learnt from again at no cost:
    :class:`~sklearn_labeldp.model_selection.PrivateGridSearchCV` with
    ``strategy="post_processing"`` cross-validates candidate base regressors
    on them, scored by an unbiased estimate of their negative squared error
    (:class:`~sklearn_labeldp._target_adapters.ReusableRealTargets`).

    Parameters
    ----------
    estimator : regressor, default=None
        Fitted on the released labels; ``None`` is a ``KNeighborsRegressor``
        whose ``n_neighbors`` is resolved at fit time from public quantities
        (above), recorded in ``mechanism_params_["n_neighbors"]`` and as
        ``estimator_.n_neighbors``. It receives ``X`` as given (a DataFrame
        for a ``ColumnTransformer`` pipeline, a sparse matrix): a k-NN reads
        distances, so standardise public features of different scales first.
    epsilon : float, default=1.0
        Label-DP epsilon of the whole fit, > 0.
    delta : float, default=1e-5
        In (0, 1); used by ``mechanism="gaussian"`` only (the others are pure
        eps-DP and record delta 0).
    label_range : tuple (low, high), default=None
        Public range of the labels; labels outside it are clipped. ``None``
        takes the smallest and largest label of ``y``, which reveals them,
        and warns with a :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`.
    mechanism : {"auto", "rr_on_bins", "unbiased", "laplace", "gaussian", "staircase"}, \
            default="auto"
        The randomizer (above); ``"auto"`` is resolved at fit time and
        recorded in ``mechanism_params_["mechanism"]``.
    prior : tuple (values, probabilities), default=None
        A public prior over label values in ``label_range`` (for
        ``"rr_on_bins"`` and ``"unbiased"`` only); ``None`` releases a DP
        histogram of the labels (or the uniform prior: see ``prior_epsilon``).
    prior_epsilon : float or "auto", default="auto"
        Epsilon of the DP histogram (``prior=None`` with ``"rr_on_bins"`` or
        ``"unbiased"``), in ``(0, epsilon)``; ``"auto"`` is ``0.1 *
        epsilon``, or ``0.3 * epsilon`` where the release is weak (``n
        tanh(0.9 epsilon / 2)^2 < 50``; see :func:`auto_prior_epsilon`), and
        0 (the uniform public prior, no histogram) where ``mechanism="auto"``
        resolves to ``"unbiased"``; recorded in
        ``mechanism_params_["prior_epsilon"]``.
    n_prior_values : int or "auto", default="auto"
        Values of the histogram's grid (>= 2), evenly spaced over the range
        ends included. ``"auto"``: ``n * prior_epsilon / 50`` between 4 and 64,
        so that a cell holds on average about 50 / prior_epsilon labels, some
        18 standard deviations of its noise (see :func:`auto_prior_size`); 64
        for the uniform prior.
    loss : {"squared", "absolute"}, default="squared"
        The loss RR-on-Bins' bins minimise (``"rr_on_bins"``) or the staircase's
        ``gamma`` is optimised for (``"staircase"``).
    debias : {"auto", "none", "predictions", "targets"}, default="auto"
        How the model undoes RR-on-Bins' shrinkage. Randomized response over
        the bins' values ``b_1..b_m`` keeps the label's bin with probability
        ``p = e^eps / (e^eps + m - 1)`` and moves to each other bin with
        ``q = 1 / (e^eps + m - 1)``, so ``E[release | y] = (p - q) b(y) + q
        sum_k b_k``: releases shrink towards the prior, and a model trained
        on them learns the shrunk mean. ``"predictions"`` maps the model's
        predictions by ``t(f) = (f - q sum_k b_k) / (p - q)``, and
        ``"targets"`` trains the model on ``t(release)``, unbiased for
        ``b(y)`` (the same model for a least-squares learner whose
        predictions are affine-equivariant, e.g. linear models, k-nearest
        neighbours, gradient boosting; the variance of the noise grows by
        ``1 / (p - q)^2`` either way); ``"none"`` keeps the shrunk model.
        ``"auto"`` is ``"predictions"`` when ``n (p - q)^2 >= 50`` (the
        debiased releases weigh as much as 50 noise-free labels) and
        ``"none"`` otherwise (from benchmarks on Friedman #1 and Adult: see
        the user guide), decided from ``n``, epsilon and the number of bins
        (public, or post-processing of the DP prior). The other mechanisms
        are unbiased already: ``t`` is the identity and every value gives the
        same model.
    random_state : None, "secure", int, numpy.random.Generator or RandomState, default=None
        Randomness of the mechanism: fresh entropy for every fit with ``None``
        or ``"secure"``; an int or generator is a replay key, and pickling a
        model fitted with one warns (see :ref:`randomness`).
    accountant : BudgetAccountant, default=None
        Charged with ``(epsilon, delta_)`` before any label is read.

    Attributes
    ----------
    estimator_ : regressor
        The clone of ``estimator`` fitted on the released labels (on their
        debiased values with ``debias="targets"``).
    privatized_labels_ : ndarray of shape (n_samples,)
        The released labels.
    prior_ : tuple (values, probabilities) or None
        The prior the randomizer used: ``prior``, the DP histogram, the
        uniform prior (``mechanism="auto"`` resolved to ``"unbiased"``), or None.
    label_range_ : tuple of float
    mechanism_params_ : dict
        ``"mechanism"`` (resolved), ``"release_epsilon"`` (the randomizer's
        epsilon), ``"debias"`` (resolved), ``"n_neighbors"`` (the default
        base's resolved ``n_neighbors``; None when ``estimator`` is given)
        and, as they apply, ``"prior_epsilon"`` (0.0 for the uniform prior),
        ``"n_prior_values"``, ``"bin_outputs"`` (RR-on-Bins' outputs),
        ``"release_scale"`` and ``"release_shift"`` (RR-on-Bins' ``p - q``
        and ``q sum_k b_k``), ``"noise_scale"`` (Laplace's scale, Gaussian's
        std), ``"rho"`` and ``"gaussian_mu"`` (the range over the noise std,
        the Gaussian mechanism's description for a tight total) and
        ``"gamma"`` (staircase), all public or computed from the DP prior (the
        key scheme: :mod:`sklearn_labeldp.utils._mechanism_params`).
    epsilon_, delta_ : float
    privacy_spend_ : PrivacySpend
        A leaf for the randomizer; with a DP histogram, a sequential
        composition of the histogram and the randomizer.
    n_features_in_ : int
    feature_names_in_ : ndarray
        Those of ``estimator_``, when it sets them.

    References
    ----------
    .. [1] B. Ghazi, P. Kamath, R. Kumar, E. Leeman, P. Manurangsi, A. Varadarajan,
       C. Zhang. Regression with label differential privacy. ICLR 2023.
    .. [2] A. Badanidiyuru, B. Ghazi, P. Kamath, R. Kumar, E. Leeman, P. Manurangsi,
       A. Varadarajan, C. Zhang. Optimal unbiased randomizers for regression with
       label differential privacy. NeurIPS 2023.

    Examples
    --------
    >>> from sklearn.datasets import make_friedman1
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> from sklearn_labeldp import NoisyLabelRegressor
    >>> X, y = make_friedman1(3000, random_state=0)
    >>> reg = NoisyLabelRegressor(HistGradientBoostingRegressor(), epsilon=4.0,
    ...                           label_range=(0, 30), random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.8), reg.privacy_spend_.mechanism
    (True, 'RR-on-Bins+DP histogram prior')
    >>> reg.mechanism_params_["prior_epsilon"], reg.mechanism_params_["n_prior_values"]
    (0.4, 24)

    With the default base, the randomizer, its prior and ``n_neighbors``
    follow the noise:

    >>> default = NoisyLabelRegressor(epsilon=2.0, label_range=(0, 30),
    ...                               random_state=0).fit(X, y)
    >>> params = default.mechanism_params_
    >>> params["mechanism"], params["prior_epsilon"], params["n_neighbors"]
    ('unbiased', 0.0, 32)
    """

    _dp_outputs = ("privatized_labels_", "prior_", "prior_.*")
    _derived_attributes = (
        *BaseLabelDPRegressor._derived_attributes,
        "mechanism_params_.*",
        "label_range_.*",
        "estimator_",
        "estimator_.*",
    )

    _parameter_constraints: dict = {
        **BaseLabelDPRegressor._parameter_constraints,
        "estimator": [HasMethods(["fit", "predict"]), None],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "mechanism": [StrOptions({*RANDOMIZERS, "auto"})],
        "prior": [tuple, list, None],
        "prior_epsilon": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "n_prior_values": [Interval(Integral, 2, None, closed="left"), StrOptions({"auto"})],
        "loss": [StrOptions({"squared", "absolute"})],
        "debias": [StrOptions({"auto", *REAL_CORRECTIONS})],
    }

    def __init__(self, estimator=None, *, epsilon=1.0, delta=1e-5, label_range=None,
                 mechanism="auto", prior=None, prior_epsilon="auto",
                 n_prior_values="auto", loss="squared", debias="auto", random_state=None,
                 accountant=None):
        self.estimator = estimator
        self.epsilon = epsilon
        self.delta = delta
        self.label_range = label_range
        self.mechanism = mechanism
        self.prior = prior
        self.prior_epsilon = prior_epsilon
        self.n_prior_values = n_prior_values
        self.loss = loss
        self.debias = debias
        self.random_state = random_state
        self.accountant = accountant

    def _get_estimator(self):
        # The template outside a fit (tags, sample_weight, the estimator checks);
        # every fit resolves n_neighbors in its plan (default_n_neighbors).
        if self.estimator is None:
            return KNeighborsRegressor(n_neighbors=CLEAN_NEIGHBORS)
        return self.estimator

    def _expected_failed_checks(self):
        # See sklearn_labeldp.utils.expected_failed_checks.
        return meta_estimator_failures(has_fit_parameter(self._get_estimator(), "sample_weight"))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        base = get_tags(self._get_estimator()).input_tags
        for name in ("sparse", "allow_nan", "string", "categorical"):
            setattr(tags.input_tags, name, getattr(base, name))
        return tags

    def _validate_X(self, X, *, reset):
        # As scikit-learn's meta-estimators: X reaches the base as given, which
        # validates it (first in the trial fit, before the charge).
        if X is None:
            raise ValueError(f"{type(self).__name__} requires X; got None.")
        return indexable(X)[0]

    # The base estimator's parameters are validated by its own fit.
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit the base estimator on the released labels.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Public features, passed to the base estimator as given.
        y : array-like of shape (n_samples,)
            Private real labels; read only by the randomizer.
        sample_weight : array-like of shape (n_samples,), default=None
            Public, label-independent weights passed to the base estimator;
            finite and >= 0, checked before any budget is charged.

        Returns
        -------
        self : object
        """
        return self._fit_or_discard(X, y, lambda X: self._fit_params(X, sample_weight))

    def _fit_params(self, X, sample_weight):
        if sample_weight is None:
            return {}
        if not has_fit_parameter(self._get_estimator(), "sample_weight"):
            raise ValueError(f"the base estimator {type(self._get_estimator()).__name__} "
                             "does not accept sample_weight.")
        return {"sample_weight": check_sample_weight(sample_weight, X)}

    # ------------------------------------------------------------------ the plan

    def _resolve_mechanism(self, n_samples):
        """The randomizer and whether its prior is the uniform one; public only.

        A given ``mechanism`` is used as given. ``"auto"`` is
        ``"rr_on_bins"`` with a given estimator (whose averaging of noise is
        unknown), and with the default base :func:`auto_mechanism` at the
        unbiased randomizer's epsilon: all of ``epsilon`` under a public prior
        (``prior``, or with ``prior_epsilon="auto"`` the uniform prior over
        the range that the unbiased randomizer then uses), else ``epsilon -
        prior_epsilon``.
        """
        if self.mechanism != "auto":
            return self.mechanism, False
        if self.estimator is not None:
            return "rr_on_bins", False
        public = self.prior is not None or self.prior_epsilon == "auto"
        prior_epsilon = 0.0 if public else float(self.prior_epsilon)
        if not prior_epsilon < self.epsilon:  # _prior_plan says why
            return "rr_on_bins", False
        mechanism = auto_mechanism(n_samples, self.epsilon - prior_epsilon)
        return mechanism, mechanism == "unbiased" and self.prior is None and public

    def _prior_plan(self, mechanism, n_samples, label_range, *, uniform=False):
        """The prior's source, its epsilon and grid; public only."""
        randomizer = RANDOMIZERS[mechanism]
        if not randomizer.uses_prior:
            if self.prior is not None or self.prior_epsilon != "auto" or \
                    self.n_prior_values != "auto":
                raise ValueError(
                    f"mechanism={mechanism!r} uses no prior: leave prior, prior_epsilon "
                    "and n_prior_values at their defaults (they apply to "
                    f"{sorted(name for name, row in RANDOMIZERS.items() if row.uses_prior)})."
                )
            return {"prior_epsilon": 0.0}
        if self.prior is not None:
            if self.prior_epsilon != "auto" or self.n_prior_values != "auto":
                raise ValueError(
                    "a public prior costs no budget and has its own values: leave "
                    "prior_epsilon and n_prior_values at 'auto' when prior is given."
                )
            values, probabilities, order = check_value_prior(self.prior, label_range)
            return {"prior_epsilon": 0.0, "prior": (values, probabilities)}
        size = self.n_prior_values
        if uniform:
            # mechanism="auto" chose the unbiased randomizer: a uniform prior over the
            # range is public and leaves it all of epsilon (measured better than the
            # DP histogram there: benchmarks/regression_defaults.py --table prior).
            size = randomizer.prior_values if size == "auto" else int(size)
            grid = label_grid(label_range, size)
            return {"prior_epsilon": 0.0, "n_prior_values": size, "uniform": True,
                    "prior": (grid, np.full(size, 1.0 / size))}
        prior_epsilon = (auto_prior_epsilon(self.epsilon, n_samples)
                         if self.prior_epsilon == "auto" else float(self.prior_epsilon))
        if not prior_epsilon < self.epsilon:
            raise ValueError(
                f"prior_epsilon={self.prior_epsilon!r} must be < epsilon={self.epsilon!r}: "
                "the rest of epsilon pays for the randomizer."
            )
        if size == "auto":
            size = auto_prior_size(n_samples, prior_epsilon, upper=randomizer.prior_values)
        return {"prior_epsilon": prior_epsilon, "n_prior_values": int(size),
                "grid": label_grid(label_range, int(size))}

    def _plan_fit(self, X, label_range, rng):
        estimator = self._get_estimator()
        if is_classifier(estimator):
            raise ValueError(
                f"{type(self).__name__}: `estimator` must be a regressor, fitted on the "
                f"released real labels; got the classifier {type(estimator).__name__}."
            )
        n_samples = _num_samples(X)
        mechanism, uniform = self._resolve_mechanism(n_samples)
        plan = self._prior_plan(mechanism, n_samples, label_range, uniform=uniform)
        randomizer = RANDOMIZERS[mechanism]
        setting = RandomizerSetting(self.epsilon - plan["prior_epsilon"], self.delta,
                                    label_range, self.loss)
        params = {"mechanism": mechanism, "release_epsilon": setting.epsilon,
                  **randomizer.plan(setting)}
        if "prior" in plan and randomizer.bins is not None:
            params.update(randomizer.bins(setting, plan["prior"]))
        spend = randomizer.spend(randomizer.name, setting, params)
        if plan["prior_epsilon"] > 0:
            params.update(prior_epsilon=plan["prior_epsilon"],
                          n_prior_values=plan["n_prior_values"])
            histogram = PrivacySpend.leaf("noisy value histogram", plan["prior_epsilon"],
                                          n_values=plan["n_prior_values"])
            spend = PrivacySpend(
                f"{randomizer.name}+DP histogram prior", PrivacyBudget(self.epsilon),
                {"prior_epsilon": plan["prior_epsilon"]}, "sequential", (histogram, spend),
            )
        elif plan.get("uniform"):
            params.update(prior_epsilon=0.0, n_prior_values=plan["n_prior_values"])
        # The default base follows the release's noise (public: epsilon, n and the
        # randomizer's planned parameters); a given estimator is used as given.
        n_neighbors, base = None, self.estimator
        if base is None:
            inflation = (1.0 if randomizer.vote_inflation is None
                         else randomizer.vote_inflation(setting, params))
            n_neighbors = default_n_neighbors(n_samples, inflation)
            base = KNeighborsRegressor(n_neighbors=n_neighbors)
        params["n_neighbors"] = n_neighbors
        plan.update(params=params, setting=setting, randomizer=randomizer, mechanism=mechanism,
                    base=base)
        return spend, plan

    # ------------------------------------------------------ label-free checks

    def _check_before_charge(self, X, label_range, plan, fit_params):
        """Fit a clone of the base on a few public rows with label-free targets.

        A configuration error (a DataFrame the base cannot read, an estimator
        parameter out of range, too few rows for its neighbours) surfaces here,
        before the charge, instead of after the labels were spent.
        """
        n_rows = min(_num_samples(X), _TRIAL_ROWS)
        rows = trial_rows(X, n_rows)
        estimator = quick_trial(seed_estimator(clone(plan["base"]), np.random.default_rng(0)))
        targets = np.linspace(label_range[0], label_range[1], rows.size)
        trial_fit(
            self,
            lambda: estimator.fit(_safe_indexing(X, rows), targets,
                                  **subset_fit_params(fit_params, rows, _num_samples(X))),
            estimator=estimator,
            where=f"{rows.size} public rows",
        )

    # ------------------------------------------------------------ the release

    def _release(self, labels, mechanism, rng, cost, what, **kwargs):
        return labels.release(
            mechanism, np.arange(labels.n_samples), privacy_cost=cost,
            failure=(f"{type(self).__name__}: {what} failed after the budget was charged; "
                     "the details are withheld because they may depend on the labels, and "
                     "the budget stays spent."),
            random_state=rng, **kwargs,
        )

    def _fit_private(self, X, labels, plan, fit_params, mechanism_rng, estimator_rng):
        randomizer, setting, params = plan["randomizer"], plan["setting"], dict(plan["params"])
        prior = plan.get("prior")
        if plan["prior_epsilon"] > 0:
            counts = self._release(labels, value_histogram, mechanism_rng, plan["prior_epsilon"],
                                   "the DP histogram of the labels", epsilon=plan["prior_epsilon"],
                                   grid=plan["grid"])
            prior = (plan["grid"], counts)
            if randomizer.bins is not None:  # post-processing of the DP histogram
                params.update(randomizer.bins(setting, prior))
        noisy = self._release(labels, randomizer.release, mechanism_rng, setting.epsilon,
                              randomizer.name, epsilon=setting.epsilon,
                              label_range=setting.label_range,
                              **randomizer.kwargs(setting, params, prior))
        # Post-processing: the base model sees the released labels only.
        scale, shift = 1.0, 0.0
        if randomizer.shrinks:
            scale, shift, _ = randomizer.moments(setting, params, prior)
            params.update(release_scale=scale, release_shift=shift)
        params["debias"] = resolve_debias(self.debias, plan["mechanism"], scale,
                                          labels.n_samples)
        targets = affine_debias(noisy, scale, shift) if params["debias"] == "targets" else noisy
        estimator = seed_estimator(clone(plan["base"]), estimator_rng)
        estimator.fit(X, targets, **fit_params)
        fitted = {"estimator_": estimator, "privatized_labels_": noisy, "prior_": prior,
                  "mechanism_params_": params}
        for name in ("n_features_in_", "feature_names_in_"):
            if hasattr(estimator, name):
                fitted[name] = getattr(estimator, name)
        return fitted

    # -------------------------------------------------------------- predicting

    @row_blocks_on_dask(real_values)
    def predict(self, X):
        """Predict with the model fitted on the released labels.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples,), float64
            Lazy, computed block by block of rows, for a dask ``X``.
        """
        check_is_fitted(self)
        predictions = np.asarray(self.estimator_.predict(X), dtype=np.float64)
        if self.mechanism_params_["debias"] == "predictions":
            return affine_debias(predictions, self.mechanism_params_.get("release_scale", 1.0),
                                 self.mechanism_params_.get("release_shift", 0.0))
        return predictions

    # ----------------------------------------------------- the post-processing protocol

    def check_target_reuse(self):
        """Every randomizer's released labels can be learnt from again: nothing to refuse.

        Each release has moments affine in the label it stands for
        (:class:`~sklearn_labeldp._target_adapters.ReusableRealTargets`), so a
        search can fit candidates on them and score them without bias.
        """

    def _reusable_targets(self):
        params = self.mechanism_params_
        scale, shift, shift_squares = release_moments(
            params["mechanism"], params, prior=self.prior_, label_range=self.label_range_)
        return ReusableRealTargets(self.privatized_labels_, scale, shift, shift_squares,
                                   correction=params["debias"])
