"""Where RRWithPrior's priors come from: uniform, a public model, temperature.

A prior is any (n_samples, n_classes) nonnegative array computed from public
information only (features, a model trained on public data, or a model trained
on already-privatised labels). Nothing here reads true labels.
"""

import numpy as np
from sklearn.utils.validation import _num_samples, check_is_fitted

from ..utils import check_positive

__all__ = ["apply_temperature", "model_prior", "uniform_prior"]


def uniform_prior(n_samples, n_classes):
    """The uninformative prior: every class equally likely.

    Parameters
    ----------
    n_samples : int
    n_classes : int

    Returns
    -------
    ndarray of shape (n_samples, n_classes)

    Examples
    --------
    >>> from sklearn_labeldp.priors import uniform_prior
    >>> uniform_prior(1, 4)
    array([[0.25, 0.25, 0.25, 0.25]])
    """
    return np.full((n_samples, n_classes), 1.0 / n_classes)


def apply_temperature(proba, temperature):
    """Sharpen (temperature < 1) or flatten (> 1) probabilities: softmax(log p / T).

    Computed in log space so small probabilities do not underflow; zero
    probabilities stay zero (Ghazi et al., 2021, appendix "Data splits and
    prior temperature").

    Parameters
    ----------
    proba : ndarray of shape (n_samples, n_classes)
        Nonnegative rows, each with a positive entry.
    temperature : float
        Finite and > 0.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        Rows sum to one.

    Examples
    --------
    >>> from sklearn_labeldp.priors import apply_temperature
    >>> apply_temperature([[0.2, 0.8, 0.0]], 0.5)
    array([[0.05882353, 0.94117647, 0.        ]])
    """
    proba = np.asarray(proba, dtype=np.float64)
    temperature = check_positive(temperature, "temperature")
    with np.errstate(divide="ignore"):
        logits = np.log(proba) / temperature
    logits -= logits.max(axis=1, keepdims=True)
    out = np.exp(logits)
    out /= out.sum(axis=1, keepdims=True)
    return out


def model_prior(model, X, classes):
    """Class probabilities of a fitted model, as columns aligned to ``classes``.

    Classes the model never saw get probability zero; a model that knows a
    class outside ``classes`` is rejected.

    Parameters
    ----------
    model : fitted classifier with ``predict_proba`` and ``classes_``
    X : array-like of shape (n_samples, n_features)
    classes : ndarray of shape (n_classes,)
        The sorted label set the prior must cover.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyClassifier
    >>> from sklearn_labeldp.priors import model_prior
    >>> public = DummyClassifier(strategy="prior").fit([[0]] * 4, ["a", "a", "a", "c"])
    >>> model_prior(public, [[0]], np.array(["a", "b", "c"]))
    array([[0.75, 0.  , 0.25]])
    """
    check_is_fitted(model)
    model_classes = np.asarray(model.classes_)
    positions = np.searchsorted(classes, model_classes)
    positions = np.clip(positions, 0, len(classes) - 1)
    if not np.array_equal(classes[positions], model_classes):
        raise ValueError(
            "the prior model knows classes that are not in `classes`: "
            f"{model_classes.tolist()} vs {np.asarray(classes).tolist()}."
        )
    proba = np.zeros((_num_samples(X), len(classes)))
    proba[:, positions] = model.predict_proba(X)
    return proba
