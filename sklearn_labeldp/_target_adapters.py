"""Fit any scikit-learn estimator on privatised targets that are not plain labels.

Two kinds of targets come out of the mechanisms, and every meta-estimator
uses these adapters to learn from them:

- soft labels, rows on the probability simplex (ALIBI's posteriors): a
  regressor fits them as a multi-output target; a classifier that accepts
  ``sample_weight`` is fitted on the data expanded once per class with weight
  equal to the class probability (exactly the soft cross-entropy for log-loss
  models); hard one-hot rows need no weights;
- bit vectors (vector approximation): a regressor fits the K columns; a
  classifier is fitted once per column (like ``MultiOutputClassifier``) and
  its ``predict_proba[:, 1]`` approximates ``E[Z_j | x]``.

An estimator that learns such targets natively (a network with a softmax or
sigmoid head, :class:`sklearn_labeldp.nn.LabelDPNetClassifier`) says so by
having the methods of this protocol, which the adapters then call directly:

- ``fit_soft(X, targets, *, refresh=None, **fit_params)``: learn rows on the
  simplex with the soft cross-entropy; ``classes_`` becomes
  ``arange(n_classes)``. ``refresh``, when given, maps the model's current
  training-set probabilities to new targets and is called between epochs
  (ALIBI's per-epoch posterior; pure post-processing of released noise);
- ``fit_bits(X, bits, **fit_params)``: learn the K bit columns with one
  sigmoid output each; ``predict_proba`` then returns the K sigmoids.

Everything here is post-processing of DP outputs: no true label is read.
"""

from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, clone, is_classifier, is_regressor
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import has_fit_parameter

from ._base import subset_fit_params
from .mechanisms import project_to_simplex
from .priors import model_prior

# The method through which an estimator learns each kind of target natively.
_NATIVE_FIT = {"soft": "fit_soft", "bits": "fit_bits"}


def _learns_natively(estimator, kind):
    return kind in _NATIVE_FIT and hasattr(estimator, _NATIVE_FIT[kind])



def check_target_capability(estimator, kind):
    """Raise a clear error if ``estimator`` cannot learn targets of ``kind``.

    Parameters
    ----------
    estimator : estimator
    kind : {"soft", "hard", "bits"}
    """
    name = type(estimator).__name__
    if is_regressor(estimator) or _learns_natively(estimator, kind):
        return
    if not is_classifier(estimator):
        raise ValueError(f"the base estimator {name} is neither a classifier nor a regressor.")
    if kind == "soft" and not has_fit_parameter(estimator, "sample_weight"):
        raise ValueError(
            f"soft labels need a regressor or a classifier whose fit accepts sample_weight; "
            f"{name} does not. Use a regressor base (e.g. KNeighborsRegressor) or hard "
            "labels (post_processing='argmax')."
        )
    if not hasattr(estimator, "predict_proba"):
        raise ValueError(f"the base classifier {name} needs predict_proba for {kind} targets.")


def supports_target_refresh(estimator):
    """Whether ``estimator`` can refresh soft targets between its epochs."""
    return _learns_natively(estimator, "soft")


def fit_soft_targets(estimator, X, targets, fit_params, *, refresh=None):
    """Fit ``estimator`` on soft labels ``targets`` of shape (n_samples, n_classes).

    ``refresh`` (a function of the model's training-set probabilities that
    returns new targets) is used by estimators with ``fit_soft`` only, and
    must be None for any other estimator.
    """
    if _learns_natively(estimator, "soft"):
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
    rows, labels = np.nonzero(targets > 0)
    expanded = subset_fit_params(fit_params, rows, n_samples)  # per-sample params follow rows
    weights = targets[rows, labels]
    if expanded.get("sample_weight") is not None:
        weights = weights * np.asarray(expanded.pop("sample_weight"))
    expanded["sample_weight"] = weights
    return estimator.fit(_safe_indexing(X, rows), labels, **expanded)


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

    Attributes
    ----------
    estimators_ : list of (classifier or float)
        The fitted classifier of each column, or the column's constant bit.
    """

    def __init__(self, estimator=None):
        self.estimator = estimator

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
            for column in np.asarray(bits).T
        ]
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
        n_samples = X.shape[0]
        return np.column_stack(
            [
                np.full(n_samples, model)
                if isinstance(model, float)
                else model_prior(model, X, np.array([0, 1]))[:, 1]
                for model in self.estimators_
            ]
        )


def fit_bit_targets(estimator, X, bits, fit_params):
    """Fit ``estimator`` on bit vectors of shape (n_samples, n_classes).

    Returns
    -------
    estimator
        The fitted estimator itself (a regressor, or one that learns bits
        natively), or for a classifier base a fitted
        :class:`BitColumnClassifiers` around it.
    """
    if _learns_natively(estimator, "bits"):
        return estimator.fit_bits(X, bits, **fit_params)
    if is_regressor(estimator):
        return estimator.fit(X, bits.astype(np.float64), **fit_params)
    return BitColumnClassifiers(estimator).fit(X, bits, **fit_params)


def predict_bit_scores(model, X):
    """The approximations ``f_j(x)`` of ``E[Z_j | x]``, shape (n_samples, n_classes)."""
    if _learns_natively(model, "bits"):
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
