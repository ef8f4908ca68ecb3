"""Prediction of the label-DP classifiers from their fitted final model.

Two families: a base classifier fitted on privatised label codes
(:class:`CodeClassifierPredictMixin`: LP-MST, PATE's student, DP-SGD's
network), and a linear model's decision scores
(:class:`DecisionFunctionPredictMixin`). Both predict lazily, block by block
of rows, on a dask ``X``. Fitted attributes only: predictions are
post-processing of the fit's release.
"""

import numpy as np
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .priors import model_prior
from .utils import is_dask, row_blocks_on_dask
from .utils._dask import class_labels, class_probabilities

__all__ = ["CodeClassifierPredictMixin", "DecisionFunctionPredictMixin", "labels_from_scores"]


def _estimator_has(attr):
    """Check the fitted final model if present, else the unfitted base estimator."""

    def check(self):
        if hasattr(self, "estimator_"):
            return hasattr(self.estimator_, attr)
        return hasattr(self._final_estimator_template(), attr)

    return check


class CodeClassifierPredictMixin:
    """Predictions of a base classifier (``estimator_``) fitted on label codes.

    For label-DP classifiers whose final model is an ordinary classifier
    trained on privatised hard labels ``0..K-1`` (e.g. LP-MST): outputs are
    mapped back through ``classes_``, with one probability column per class
    even for classes absent from the privatised labels. With
    ``_passes_X_through``, ``X`` goes to ``estimator_`` as given, which
    validates it (feature names and their order included, as for
    scikit-learn's meta-estimators).
    """

    @row_blocks_on_dask(class_labels)
    def predict(self, X):
        """Predict class labels with the final model.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples,)
            Lazy, computed block by block of rows, for a dask ``X``.
        """
        check_is_fitted(self)
        X = self._prediction_X(X)
        return self.classes_.take(np.asarray(self.estimator_.predict(X), dtype=np.intp))

    @available_if(_estimator_has("predict_proba"))
    @row_blocks_on_dask(class_probabilities)
    def predict_proba(self, X):
        """Class probabilities of the final model, one column per entry of ``classes_``.

        Classes absent from the privatised labels get probability zero.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples, n_classes)
            Lazy, computed block by block of rows, for a dask ``X``.
        """
        check_is_fitted(self)
        X = self._prediction_X(X)
        return model_prior(self.estimator_, X, np.arange(self.classes_.size))

    @available_if(_estimator_has("decision_function"))
    # The output's shape, (n,) or (n, K), depends on the final model: probed on a public row.
    @row_blocks_on_dask()
    def decision_function(self, X):
        """Decision scores of the final model.

        When the privatised labels covered every class this is the base
        estimator's output unchanged; otherwise an (n_samples, n_classes) array
        with ``-inf`` for the classes the model never saw.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples,) or (n_samples, n_classes)
            Lazy, computed block by block of rows, for a dask ``X``.
        """
        check_is_fitted(self)
        X = self._prediction_X(X)
        scores = self.estimator_.decision_function(X)
        seen = np.asarray(self.estimator_.classes_, dtype=np.intp)
        if seen.size == self.classes_.size:
            return scores
        if scores.ndim == 1:
            scores = np.column_stack([-scores, scores])
        full = np.full((scores.shape[0], self.classes_.size), -np.inf)
        full[:, seen] = scores
        return full


def labels_from_scores(scores, classes):
    """Class labels from decision scores, with scikit-learn's conventions.

    A 1-d score (two classes) is positive for ``classes[1]``; a 2-d score
    picks the class of the largest column.
    """
    if scores.ndim == 1:
        return classes.take((scores > 0).astype(np.intp))
    return classes.take(np.argmax(scores, axis=1))


class DecisionFunctionPredictMixin:
    """``predict`` from ``decision_function`` (:func:`labels_from_scores`).

    When ``decision_function`` returns a dask array (a dask ``X``), the labels
    are computed blockwise, lazily, chunked like the scores along rows.
    """

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples,)
            Lazy, chunked like ``X`` along rows, for a dask ``X``.
        """
        scores = self.decision_function(X)
        if not is_dask(scores):
            return labels_from_scores(scores, self.classes_)
        return scores.map_blocks(
            labels_from_scores, self.classes_, drop_axis=list(range(1, scores.ndim)),
            chunks=(scores.chunks[0],), dtype=self.classes_.dtype,
        )
