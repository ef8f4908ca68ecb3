"""Fit any scikit-learn estimator on privatised targets that are not plain labels.

Three kinds of targets come out of the mechanisms, and every meta-estimator
uses these adapters to learn from them:

- soft labels, rows on the probability simplex (ALIBI's posteriors): a
  regressor fits them as a multi-output target; a classifier that accepts
  ``sample_weight`` is fitted on the data expanded once per class with weight
  equal to the class probability (exactly the soft cross-entropy for log-loss
  models); hard one-hot rows need no weights; a classifier without
  ``sample_weight`` is reduced: a k-NN classifier to the k-NN regressor of the
  same neighbourhood on the soft labels (the soft form of its vote, exactly),
  any other to its fit on every row repeated :data:`SOFT_REPLICAS` times with
  classes in proportion to the row's soft label (largest-remainder rounding,
  an error of at most ``1 / SOFT_REPLICAS`` per class);
- bit vectors (vector approximation): a regressor fits the K columns; a
  classifier is fitted once per column (like ``MultiOutputClassifier``) and
  its ``predict_proba[:, 1]`` approximates ``E[Z_j | x]``;
- semi-supervised label codes, ``-1`` marking an unlabeled row (scikit-learn's
  convention; PATE's unanswered queries and the rows outside a teacher's
  part): learnt by a semi-supervised estimator
  (:class:`~sklearn.semi_supervised.SelfTrainingClassifier`,
  :class:`~sklearn.semi_supervised.LabelPropagation`,
  :class:`~sklearn.semi_supervised.LabelSpreading`, or a
  :class:`~sklearn.pipeline.Pipeline` ending in one) through its ``fit``.

An estimator that learns such targets natively (a network with a softmax or
sigmoid head, :class:`sklearn_labeldp.nn.LabelDPNetClassifier`) says so by
having the methods of this protocol, which the adapters then call directly:

- ``fit_soft(X, targets, *, refresh=None, **fit_params)``: learn rows on the
  simplex with the soft cross-entropy; ``classes_`` becomes
  ``arange(n_classes)``. ``refresh``, when given, maps the model's current
  training-set probabilities to new targets and is called between epochs
  (ALIBI's per-epoch posterior; pure post-processing of released noise);
- ``fit_bits(X, bits, **fit_params)``: learn the K bit columns with one
  sigmoid output each; ``predict_proba`` then returns the K sigmoids;
- ``fit_semi(X, y, **fit_params)``: learn from label codes with ``-1`` for
  the unlabeled rows (FixMatch, Sohn et al. 2020).

What an estimator can learn is asked of :func:`learns_natively` and, for the
semi-supervised kind, :func:`learns_semi_supervised`; never of its methods
directly. :class:`TargetReuseMixin` declares the protocol through which a
post-processing search learns again from an estimator's privatised targets:
a classifier's (:class:`ReusableTargets`) or a regressor's released real
labels (:class:`ReusableRealTargets`), both through ``fit`` and ``scores``.

Everything here is post-processing of DP outputs: no true label is read.
"""

import copy
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, clone, is_classifier, is_regressor
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import Pipeline
from sklearn.semi_supervised import LabelPropagation, LabelSpreading, SelfTrainingClassifier
from sklearn.utils import _safe_indexing
from sklearn.utils.metadata_routing import _routing_enabled
from sklearn.utils.validation import _num_samples, check_is_fitted, has_fit_parameter

from ._base import subset_fit_params
from .mechanisms import project_to_simplex
from .priors import model_prior
from .utils import progress

# The method through which an estimator learns each kind of target natively.
_NATIVE_FIT = {"soft": "fit_soft", "bits": "fit_bits", "semi": "fit_semi"}

# scikit-learn's estimators that learn from ``-1`` = unlabeled through ``fit``.
_SEMI_SUPERVISED = (SelfTrainingClassifier, LabelPropagation, LabelSpreading)


def learns_natively(estimator, kind):
    """Whether ``estimator`` has the method that learns targets of ``kind`` directly.

    Parameters
    ----------
    estimator : estimator
    kind : {"soft", "bits", "semi"}
        ``fit_soft``, ``fit_bits`` or ``fit_semi`` (see the module's protocol).

    Returns
    -------
    bool
    """
    return kind in _NATIVE_FIT and hasattr(estimator, _NATIVE_FIT[kind])


def learns_semi_supervised(estimator):
    """Whether ``estimator`` learns from label codes with ``-1`` for the unlabeled rows.

    True for an estimator with ``fit_semi`` (a network trained with FixMatch),
    for :class:`~sklearn.semi_supervised.SelfTrainingClassifier`,
    :class:`~sklearn.semi_supervised.LabelPropagation`,
    :class:`~sklearn.semi_supervised.LabelSpreading` (and subclasses), and for
    a :class:`~sklearn.pipeline.Pipeline` whose last step is one of them. Any
    other classifier would take ``-1`` for a class.

    Parameters
    ----------
    estimator : estimator

    Returns
    -------
    bool
    """
    if learns_natively(estimator, "semi"):
        return True
    if isinstance(estimator, Pipeline):
        estimator = estimator.steps[-1][1]
    return isinstance(estimator, _SEMI_SUPERVISED)


def sample_weight_key(estimator):
    """The ``fit`` keyword through which ``estimator`` takes per-row weights, or None.

    ``"sample_weight"`` for an estimator whose ``fit`` has it; for a
    :class:`~sklearn.pipeline.Pipeline` (a ``ColumnTransformer`` followed by a
    classifier, as a tabular base usually is) ``"<last step>__sample_weight"``,
    the Pipeline's own way to pass a parameter to its final step, or, when
    metadata routing is enabled, ``"sample_weight"``, which the Pipeline routes
    to the steps that request it.

    Parameters
    ----------
    estimator : estimator

    Returns
    -------
    str or None
    """
    if has_fit_parameter(estimator, "sample_weight"):
        return "sample_weight"
    if isinstance(estimator, Pipeline) and estimator.steps:
        if _routing_enabled():
            return "sample_weight"
        name, last = estimator.steps[-1]
        key = None if last in (None, "passthrough") else sample_weight_key(last)
        return None if key is None else f"{name}__{key}"
    return None


def check_target_capability(estimator, kind):
    """Raise a clear error if ``estimator`` cannot learn targets of ``kind``.

    Parameters
    ----------
    estimator : estimator
    kind : {"soft", "hard", "bits"}
        Semi-supervised targets are never required, only offered to the
        estimators that can learn them (:func:`learns_semi_supervised`).
    """
    name = type(estimator).__name__
    if is_regressor(estimator) or learns_natively(estimator, kind):
        return
    if not is_classifier(estimator):
        raise ValueError(f"the base estimator {name} is neither a classifier nor a regressor.")
    if not hasattr(estimator, "predict_proba"):
        raise ValueError(f"the base classifier {name} needs predict_proba for {kind} targets.")


def supports_target_refresh(estimator):
    """Whether ``estimator`` can refresh soft targets between its epochs."""
    return learns_natively(estimator, "soft")


def fit_soft_targets(estimator, X, targets, fit_params, *, refresh=None):
    """Fit ``estimator`` on soft labels ``targets`` of shape (n_samples, n_classes).

    ``refresh`` (a function of the model's training-set probabilities that
    returns new targets) is used by estimators with ``fit_soft`` only, and
    must be None for any other estimator.
    """
    if learns_natively(estimator, "soft"):
        return estimator.fit_soft(X, targets, refresh=refresh, **fit_params)
    if refresh is not None:
        raise ValueError(
            f"{type(estimator).__name__} has no fit_soft, so it cannot refresh its targets."
        )
    if is_regressor(estimator):
        return estimator.fit(X, targets, **fit_params)
    n_samples = targets.shape[0]
    if np.all((targets == 0) | (targets == 1)):  # hard labels: no expansion needed
        return estimator.fit(X, np.argmax(targets, axis=1), **fit_params)
    key = sample_weight_key(estimator)
    if key is None:  # no weights: the reductions of the module docstring
        if isinstance(estimator, KNeighborsClassifier):
            neighbours = KNeighborsRegressor(**{
                name: value for name, value in estimator.get_params().items()
                if name in KNeighborsRegressor._get_param_names()})
            return neighbours.fit(X, targets, **fit_params)
        rows, labels = _replicated(targets, SOFT_REPLICAS)
        return estimator.fit(_safe_indexing(X, rows), labels,
                             **subset_fit_params(fit_params, rows, n_samples))
    rows, labels = np.nonzero(targets > 0)
    expanded = subset_fit_params(fit_params, rows, n_samples)  # per-sample params follow rows
    weights = targets[rows, labels]
    if expanded.get(key) is not None:
        weights = weights * np.asarray(expanded.pop(key))
    expanded[key] = weights
    return estimator.fit(_safe_indexing(X, rows), labels, **expanded)


# Copies of each row when a classifier without sample_weight learns soft labels.
SOFT_REPLICAS = 20


def _replicated(targets, replicas):
    """Rows repeated ``replicas`` times, classes in proportion to each soft label.

    Largest-remainder rounding of ``replicas * targets``: each row gets exactly
    ``replicas`` copies and each class within one copy of its share.
    """
    n_samples, n_classes = targets.shape
    scaled = replicas * targets
    counts = np.floor(scaled).astype(np.int64)
    short = replicas - counts.sum(axis=1)
    rank = np.argsort(np.argsort(counts - scaled, axis=1, kind="stable"), axis=1)
    counts += rank < short[:, None]
    rows = np.repeat(np.arange(n_samples), replicas)
    labels = np.repeat(np.tile(np.arange(n_classes), n_samples), counts.ravel())
    return rows, labels


def fit_semi_supervised_targets(estimator, X, targets, fit_params):
    """Fit ``estimator`` on label codes ``targets``, ``-1`` marking an unlabeled row.

    Through ``fit_semi`` for an estimator that learns them natively, else
    through ``fit``: a semi-supervised estimator of scikit-learn reads the
    ``-1``, and any other classifier must be given labeled rows only.

    Parameters
    ----------
    estimator : estimator
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    targets : ndarray of shape (n_samples,)
    fit_params : dict
        Passed to ``fit_semi`` or ``fit``.

    Returns
    -------
    estimator
        The fitted estimator.
    """
    if learns_natively(estimator, "semi"):
        return estimator.fit_semi(X, targets, **fit_params)
    return estimator.fit(X, targets, **fit_params)


def predict_soft_targets(model, X, n_classes):
    """Class probabilities predicted by a model fitted with :func:`fit_soft_targets`."""
    if is_regressor(model):
        return project_to_simplex(np.asarray(model.predict(X), dtype=np.float64))
    return model_prior(model, X, np.arange(n_classes))


class BitColumnClassifiers(BaseEstimator):
    """One classifier per bit column: how a classifier learns bit vectors.

    Fitted by :func:`fit_bit_targets` for a classifier base, like scikit-learn's
    ``MultiOutputClassifier`` except that a column whose bits are all equal
    is kept as that constant (a classifier cannot be fitted on one class).

    Parameters
    ----------
    estimator : classifier
        Cloned once per column; it needs ``predict_proba``.
    verbose : int, default=0
        Above 0, a progress bar (tqdm, when installed) counts the columns.

    Attributes
    ----------
    estimators_ : list of (classifier or float)
        The fitted classifier of each column, or the column's constant bit.
    n_features_in_ : int
        The first fitted classifier's, when it has one (as for
        ``OneVsRestClassifier``).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        The first fitted classifier's, when it has them.
    """

    def __init__(self, estimator=None, verbose=0):
        self.estimator = estimator
        self.verbose = verbose

    def fit(self, X, bits, **fit_params):
        """Fit one clone of ``estimator`` per column of ``bits``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        bits : ndarray of shape (n_samples, n_columns)
        **fit_params : dict
            Passed to every clone's ``fit``.

        Returns
        -------
        self : object
        """
        self.estimators_ = [
            float(column[0])
            if np.all(column == column[0])
            else clone(self.estimator).fit(X, column, **fit_params)
            for column in progress(np.asarray(bits).T, desc="bit columns",
                                   enabled=self.verbose > 0)
        ]
        fitted = [model for model in self.estimators_ if not isinstance(model, float)]
        for name in ("n_features_in_", "feature_names_in_"):
            self.__dict__.pop(name, None)
            if fitted and hasattr(fitted[0], name):
                setattr(self, name, getattr(fitted[0], name))
        return self

    def predict_proba_columns(self, X):
        """``P(bit_j = 1 | x)`` for every column, shape (n_samples, n_columns).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_columns)
        """
        n_samples = _num_samples(X)
        return np.column_stack(
            [
                np.full(n_samples, model)
                if isinstance(model, float)
                else model_prior(model, X, np.array([0, 1]))[:, 1]
                for model in self.estimators_
            ]
        )


def fit_bit_targets(estimator, X, bits, fit_params, verbose=0):
    """Fit ``estimator`` on bit vectors of shape (n_samples, n_classes).

    ``verbose`` > 0 shows a progress bar over a classifier base's column fits.

    Returns
    -------
    estimator
        The fitted estimator itself (a regressor, or one that learns bits
        natively), or for a classifier base a fitted
        :class:`BitColumnClassifiers` around it.
    """
    if learns_natively(estimator, "bits"):
        return estimator.fit_bits(X, bits, **fit_params)
    if is_regressor(estimator):
        return estimator.fit(X, bits.astype(np.float64), **fit_params)
    return BitColumnClassifiers(estimator, verbose=verbose).fit(X, bits, **fit_params)


def predict_bit_scores(model, X):
    """The approximations ``f_j(x)`` of ``E[Z_j | x]``, shape (n_samples, n_classes)."""
    if learns_natively(model, "bits"):
        return np.asarray(model.predict_proba(X), dtype=np.float64)
    if isinstance(model, BitColumnClassifiers):
        return model.predict_proba_columns(X)
    return np.asarray(model.predict(X), dtype=np.float64)


@dataclass(frozen=True)
class ReusableTargets:
    """Privatised targets that a post-processing search may learn from again.

    Everything done with them is post-processing of one DP release. A model's
    prediction agrees with a held-out privatised target with probability
    ``agree_if_right`` when the prediction is the true label and
    ``agree_if_wrong`` otherwise, whatever the model (the target's noise is
    independent of a model fitted on other rows), so the mean agreement ``a``
    gives the unbiased accuracy ``(a - agree_if_wrong) / (agree_if_right -
    agree_if_wrong)``.

    Parameters
    ----------
    targets : ndarray
        Hard label codes of shape (n_samples,) (``kind="hard"``) or bit
        vectors of shape (n_samples, n_classes) (``kind="bits"``).
    agree_if_right, agree_if_wrong : float
    kind : {"hard", "bits"}
    """

    targets: np.ndarray
    agree_if_right: float
    agree_if_wrong: float
    kind: str

    def fit(self, estimator, X, rows):
        """Fit ``estimator`` on the targets of ``rows`` (indices into ``X``)."""
        X_rows = _safe_indexing(X, rows)
        if self.kind == "hard":
            return estimator.fit(X_rows, self.targets[rows])
        return fit_bit_targets(estimator, X_rows, self.targets[rows], {})

    def agreement(self, model, X, rows):
        """Mean agreement of ``model``'s predictions with the targets of ``rows``.

        For hard labels: the share of predictions equal to the noisy label;
        for bit vectors: the mean bit of the predicted class.
        """
        X_rows = _safe_indexing(X, rows)
        if self.kind == "hard":
            return float(np.mean(np.asarray(model.predict(X_rows)) == self.targets[rows]))
        predicted = np.argmax(predict_bit_scores(model, X_rows), axis=1)
        return float(np.mean(self.targets[rows][np.arange(len(rows)), predicted]))

    def debias(self, agreement):
        """The unbiased accuracy estimate of a mean ``agreement``."""
        return (agreement - self.agree_if_wrong) / (self.agree_if_right - self.agree_if_wrong)

    def scores(self, model, X, rows):
        """The observed and the unbiased score of ``model`` on the targets of ``rows``.

        The interface shared with :class:`ReusableRealTargets`: the mean
        agreement (:meth:`agreement`) and the unbiased accuracy
        (:meth:`debias` of it).

        Returns
        -------
        observed, unbiased : float
        """
        observed = self.agreement(model, X, rows)
        return observed, float(self.debias(observed))


def affine_debias(values, scale, shift):
    """``(values - shift) / scale``: undo the affine shrinkage ``E[z | y] = scale b(y) + shift``.

    Parameters
    ----------
    values : ndarray
        Released labels, or a model's predictions of them.
    scale : float
        > 0.
    shift : float

    Returns
    -------
    ndarray of float64
    """
    return (np.asarray(values, dtype=np.float64) - shift) / scale


# How a model learns from the released real labels and how its predictions are
# read: fitted on them as released, fitted on their debiased values, or fitted
# on them as released with its predictions debiased.
REAL_CORRECTIONS = ("none", "targets", "predictions")


@dataclass(frozen=True)
class ReusableRealTargets:
    """Released real labels that a post-processing search may learn from again.

    Every label randomizer of
    :class:`~sklearn_labeldp.regression.NoisyLabelRegressor` releases a ``z``
    whose first two moments given the label are affine in one value ``b(y)``
    with the same slope::

        E[z | y] = scale b(y) + shift,    E[z^2 | y] = scale b(y)^2 + shift_squares,

    where ``b(y)`` is the label the release stands for: ``clip(y)`` for the
    unbiased mechanisms (Laplace, Gaussian, staircase noise on the clipped
    labels, ``scale = 1``, ``shift = 0``, ``shift_squares`` the noise
    variance; the optimal unbiased randomizer of Badanidiyuru et al. 2023,
    ``shift_squares`` its variance under its prior), and the output value of
    the label's bin for RR-on-Bins (Ghazi et al. 2023): randomized response
    over the bins' values ``b_1..b_m``, keeping the bin with probability
    ``p`` and moving to each other with ``q``, gives ``scale = p - q``,
    ``shift = q sum_k b_k``, ``shift_squares = q sum_k b_k^2``. So ``t(z) =
    (z - shift) / scale`` and ``s(z) = (z^2 - shift_squares) / scale`` are
    unbiased for ``b(y)`` and ``b(y)^2``, and for a model ``f`` fitted on
    other rows (independent of these rows' noise) ``-mean(f^2 - 2 f t(z) +
    s(z))`` is an unbiased estimate of ``-mean((f - b(y))^2)``, the negative
    mean squared error against the labels the releases stand for.

    For the additive mechanisms that is the observed squared error against
    the releases minus the noise variance: the same for every model (the
    noise does not depend on it), so it only moves the score. The unbiased
    randomizer's variance depends on the label; its mean under the prior is
    used, exact when the rows follow the prior and in any case the same for
    every model, so that the ranking of models is exact in expectation.

    Parameters
    ----------
    targets : ndarray of shape (n_samples,)
        The released labels.
    scale : float, default=1.0
        > 0.
    shift, shift_squares : float, default=0.0
    correction : {"none", "targets", "predictions"}, default="none"
        What the estimator fitted on these labels does (its resolved
        ``debias``): a model is fitted on the releases (``"none"``,
        ``"predictions"``) or on ``t(z)`` (``"targets"``), and its
        predictions are mapped by ``t`` (``"predictions"``) or read as they
        are. The scores are those of the predictions so read.
    """

    targets: np.ndarray
    scale: float = 1.0
    shift: float = 0.0
    shift_squares: float = 0.0
    correction: str = "none"

    kind = "real"

    def fit(self, estimator, X, rows):
        """Fit ``estimator`` on the targets of ``rows`` (indices into ``X``), as corrected."""
        targets = self.targets[rows]
        if self.correction == "targets":
            targets = affine_debias(targets, self.scale, self.shift)
        return estimator.fit(_safe_indexing(X, rows), targets)

    def predict(self, model, X):
        """The predictions of a model fitted by :meth:`fit`, as corrected."""
        predictions = np.asarray(model.predict(X), dtype=np.float64)
        if self.correction == "predictions":
            return affine_debias(predictions, self.scale, self.shift)
        return predictions

    def scores(self, model, X, rows):
        """The observed and the unbiased negative squared error of ``model`` on ``rows``.

        Returns
        -------
        observed : float
            ``-mean((f - z)^2)``, against the released labels.
        unbiased : float
            ``-mean(f^2 - 2 f t(z) + s(z))``, an unbiased estimate of the
            negative mean squared error against ``b(y)`` (see the class).
        """
        f = self.predict(model, _safe_indexing(X, rows))
        z = self.targets[rows]
        observed = -float(np.mean(np.square(f - z)))
        debiased = affine_debias(z, self.scale, self.shift)
        squares = affine_debias(np.square(z), self.scale, self.shift_squares)
        return observed, -float(np.mean(f * (f - 2.0 * debiased) + squares))


class TargetReuseMixin:
    """The post-processing protocol: privatised targets a search may learn from again.

    :class:`~sklearn_labeldp.model_selection.PrivateGridSearchCV` with
    ``strategy="post_processing"`` privatises the labels once, by fitting the
    estimator, then cross-validates candidate base learners on its privatised
    targets and returns the estimator with the best one as final model: all
    of it post-processing of the one release. It needs three methods, which a
    label-DP estimator offers by inheriting this mixin:

    - :meth:`check_target_reuse`, before anything is charged: raise
      ``ValueError`` when the estimator's parameters give targets that cannot
      be reused (reads parameters only); once fitted, :meth:`reusable_targets`
      asks the same of the fitted release (``_check_fitted_target_reuse``,
      which reads fitted attributes only, so ``set_params`` after the fit
      changes nothing);
    - :meth:`reusable_targets`, once fitted: the privatised targets and how
      to score a model on them without bias: a classifier's agreement
      probabilities (:class:`ReusableTargets`, an unbiased accuracy) or a
      regressor's release moments (:class:`ReusableRealTargets`, an unbiased
      negative squared error); the search fits candidates with their ``fit``
      and scores them with their ``scores``;
    - :meth:`with_final_estimator`, once fitted: a copy whose final model is
      one fitted on those targets only.

    A subclass implements ``_reusable_targets()`` and overrides
    :meth:`check_target_reuse` and ``_check_fitted_target_reuse`` when some
    settings rule reuse out, and
    ``_set_final_estimator(model)`` when it keeps more than ``estimator_``.
    Implemented by :class:`~sklearn_labeldp.classifiers.RRWithPriorClassifier`,
    :class:`~sklearn_labeldp.classifiers.VectorApproxClassifier` and
    :class:`~sklearn_labeldp.regression.NoisyLabelRegressor`.
    """

    def check_target_reuse(self):
        """Raise ``ValueError`` unless the privatised targets can be learnt from again.

        Reads the parameters only, so the search calls it before any charge.
        Every fit's targets can be reused unless a subclass says otherwise.
        """

    def reusable_targets(self):
        """The fitted privatised targets, with what scores a model on them without bias.

        Returns
        -------
        ReusableTargets or ReusableRealTargets
        """
        check_is_fitted(self)
        self._check_fitted_target_reuse()
        return self._reusable_targets()

    def _check_fitted_target_reuse(self):
        """Raise ``ValueError`` unless the fitted release can be learnt from again.

        Reads fitted attributes only. Every release can be reused unless a
        subclass says otherwise.
        """

    def with_final_estimator(self, model):
        """A copy of this fitted estimator whose final model is ``model``.

        ``model`` must have been fitted on ``reusable_targets()`` only, so the
        copy is post-processing of the same release and costs nothing more.

        Parameters
        ----------
        model : estimator
            Fitted on the targets of :meth:`reusable_targets`.

        Returns
        -------
        estimator
            A deep copy of this estimator, of its class.
        """
        check_is_fitted(self)
        copied = copy.deepcopy(self)
        copied._set_final_estimator(model)
        return copied

    def _reusable_targets(self):
        raise NotImplementedError

    def _set_final_estimator(self, model):
        self.estimator_ = model
