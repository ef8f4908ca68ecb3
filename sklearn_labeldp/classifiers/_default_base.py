r"""The default base estimator of the randomized-response meta-estimators.

:class:`~sklearn_labeldp.classifiers.RRWithPriorClassifier`,
:class:`~sklearn_labeldp.classifiers.VectorApproxClassifier` and
:class:`~sklearn_labeldp.classifiers.ALIBIClassifier` fit, when
``estimator=None``, gradient-boosted trees where the noisy labels are many
enough for them, and otherwise a k-nearest-neighbours model on the
privatised targets. A k-NN prediction is a vote of ``k`` privatised targets,
and the noise of the mechanism makes each vote worth less. Both choices are
made here, once for the three estimators, from public quantities only (the
rows of the training set, the number of classes, epsilon, whether ``X`` is
sparse), never from the labels.

Trees or neighbours
-------------------

With ``rho`` the factor below by which the mechanism inflates a vote, ``n /
(K rho)`` is about the clean labels per class that ``n`` noisy ones are
worth. A ``HistGradientBoostingClassifier`` (scikit-learn's defaults; Ke et
al. 2017) fits the noisy targets where ``n / (K rho^2)`` is at least 60
(randomized response, LP-MST: hard labels) or 150 (ALIBI's soft labels, fit
through weights, and vector approximation's bits, one column at a time):
the trees choose their splits on the noisy labels too, so the noise counts
twice. A sparse ``X`` keeps the k-NN (the trees take no sparse matrix). Set
from the test accuracy of the k-NN rule, a ``LogisticRegression`` and the
trees around each estimator (``benchmarks/defaults_meta.py``, 3 seeds) on
Adult, the digits, a 14,000-row 5-class synthetic set and 200- and 400-row
sets, at epsilon 1, 2 and 4: the trees were 2 to 4 points ahead on Adult at
every epsilon (randomized response at epsilon 1: 0.864 against the k-NN's
0.831; non-private trees 0.873), ahead on the synthetic set from epsilon 2
and on the small sets at epsilon 4 for randomized response, and behind
where the noise is large against the rows (the digits at epsilon 1 and 2,
every set at epsilon 1 but Adult: up to 36 points), which the ``rho^2``
keeps on the k-NN. The linear model was never the best there by more than
a point, so it is not a default; pass it where the classes are linear.

Its known miss is vector approximation on ``make_hastie_10_2`` (8,400
rows, two classes) at epsilon 1: ``n / (K rho^2) = 54`` keeps the k-NN
(0.582) where the trees reach 0.799. The trees win there at every epsilon,
by 13 to 25 points, even at ``n / (K rho^2) = 4`` (epsilon 0.5: 0.678
against 0.552; randomized response 0.746 against 0.571), and a k-NN gets
only 0.656 on clean labels: the k-NN is weak on those data, which no public
quantity tells. No lower threshold helps without new misses: on two more
2-class sets the rule was not set on (``make_moons`` and
``make_classification``, 10,000 rows) the same ratio, 64, favours the k-NN
by 2.5 and 2.2 points, and the digits at epsilon 4 (68) by 3.7; at 115
(18,000 rows) one favours the trees by 1.3 points and the other the k-NN by
1.1. The dimension does not tell them apart (10 features for Hastie's
data, 5 and 12 for the others), nor does ``K``: a factor that counts the
false bits of the ``K - 1`` other classes in each column a tree fits keeps
the digits and reaches Hastie's data, but keeps the k-NN on a 10-class set
of 20,000 rows at epsilon 2, 2.9 points under the trees
(``benchmarks/defaults_meta.py``, ``--datasets hastie moons-2 mc-10k-2
moons-18k-2 mc-18k-2 mc-20k-10``, 3 seeds).

The rule
--------
Take a point on the boundary between two classes ``a`` and ``b``
(``P(y = a | x) = P(y = b | x) = 1/2``) and let ``D = T_a - T_b`` be the
difference of the two coordinates of the target the base estimator averages
(the one-hot label, a RAPPOR bit vector, ...). A ``k``-vote estimates the
sign of ``P(y = a | x) - P(y = b | x)`` through the mean of ``D``, whose
standard error is ``sd(D) / sqrt(k)`` and whose slope in that difference is
the gap ``g = (E[D | y = a] - E[D | y = b]) / 2``. With clean labels ``g = 1``
and ``Var(D) = 1``; a mechanism inflates the votes needed for the same
precision by the factor

.. math:: \rho = \operatorname{Var}(D) / g^2 ,

so the noisy vote uses ``k = k_0 rho`` neighbours (rounded), where ``k_0 = 10``
is the clean-label value (the library's earlier fixed default, and
scikit-learn's order of magnitude). For K-ary randomized response (keep
probability ``p = e^eps / (e^eps + K - 1)``, flip probability
``q = 1 / (e^eps + K - 1)``): ``g = p - q`` (the keep-minus-flip
probability), ``Var(D) = p + q``, so

.. math:: \rho_{RR} = \frac{(1 + e^{-\varepsilon})(1 + (K - 1) e^{-\varepsilon})}
          {(1 - e^{-\varepsilon})^2},

``coth^2(eps / 2)`` for two classes. For RAPPOR (bit probabilities
``q_\pm = 1 / (1 + e^{\mp \varepsilon / 2})``): ``g = q_+ - q_- = tanh(eps / 4)``
and ``Var(D) = q_+^2 + q_-^2``, so ``rho = (1 + t^2) / (2 t^2)`` with
``t = tanh(eps / 4)``, independent of ``K``. ALIBI's additive noise on the
one-hot label, denoised by its Bayes posterior over two rounds, is given the
randomized-response factor of the same epsilon: on the digits, Adult and
small data sets its best ``k`` (measured on test data,
``benchmarks/defaults_meta.py``) was within a factor of two of that rule,
where the single-round posterior's own factor (about RAPPOR's) overshot it.

Averaging over more neighbours also averages over a larger region, whose
labels differ (the bias of k-NN): ``k`` is capped at ``n / (2 K)``, half the
rows of an average class, beyond which the neighbourhood of a point reaches
well into the other classes. On the digits, Adult, a 5-class synthetic set
and data sets of 100 to 400 rows, the capped rule was within 3 points of the
best ``k`` (on test data) on average, where ``k = 10`` lost up to 30 points at
``epsilon <= 1``. The rule ignores the dimension and the smoothness of the
classes, which only labels could reveal; a user who knows better passes an
estimator. Its known miss is the smallest data: on 100 rows of two classes
at ``epsilon = 1``, ALIBI's best ``k`` is about 5 (0.655 against the rule's
25, 0.583 over 21 seeds; majority 0.502), but a cap tight enough for that, ``n / (4 K)``,
costs randomized response and vector approximation 7 to 11 points on the
digits at ``epsilon <= 1`` (0.680 to 0.585 and 0.767 to 0.693 at
``epsilon = 1``), where 62 neighbours beat 31: no public quantity tells the
two apart.
"""

import math

from scipy.sparse import issparse
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.neighbors import KNeighborsClassifier

from .._base import seed_estimator
from .._neighbors import CLEAN_NEIGHBORS, default_n_neighbors
from ..mechanisms._randomized_response import rr_vote_inflation

__all__ = [
    "CLEAN_NEIGHBORS",
    "NoiseAdaptiveBaseMixin",
    "default_n_neighbors",
    "default_uses_trees",
    "rappor_vote_inflation",
    "rr_vote_inflation",
]

def rappor_vote_inflation(epsilon):
    """The factor ``rho`` by which RAPPOR inflates a k-NN vote: ``(1 + t^2) / (2 t^2)``.

    ``t = tanh(eps / 4)`` is the gap ``q+ - q-`` of the bit probabilities;
    ``1 + t^2 = 2 (q+^2 + q-^2)``.

    Parameters
    ----------
    epsilon : float
        The mechanism's epsilon, > 0.

    Returns
    -------
    float
    """
    t2 = math.tanh(epsilon / 4.0) ** 2
    return math.inf if t2 == 0.0 else (1.0 + t2) / (2.0 * t2)


def default_uses_trees(n_samples, n_classes, inflation, min_rows):
    """Whether the default base is gradient-boosted trees: ``n / (K rho^2) >= min_rows``.

    ``n / (K rho)`` is about the clean labels per class that ``n`` noisy ones
    are worth; trees choose their splits on the noisy labels too, so they pay
    the noise once more: ``n / (K rho^2)``. ``min_rows`` is 60 for hard
    randomized targets (randomized response, LP-MST) and 150 for the soft
    or bit targets of ALIBI and vector approximation, which the trees fit
    through weights or one column at a time (module docstring).

    Parameters
    ----------
    n_samples : int
    n_classes : int
    inflation : float
        The mechanism's factor ``rho``.
    min_rows : float

    Returns
    -------
    bool
    """
    return n_samples / (n_classes * min(inflation, 1e150) ** 2) >= min_rows


class NoiseAdaptiveBaseMixin:
    """``estimator=None`` means a base resolved from public quantities.

    Gradient-boosted trees (``HistGradientBoostingClassifier``) where
    :func:`default_uses_trees` says the noisy labels are enough (dense ``X``
    only: the trees take no sparse matrix), else a k-NN whose
    ``n_neighbors`` follows the noise (:func:`default_n_neighbors`). The
    estimator states ``_default_neighbors_class`` (the k-NN classifier or
    regressor), ``_trees_min_rows`` (60 or 150) and ``_vote_inflation(n_classes)``
    (its mechanism's factor ``rho`` at its epsilon). Its plan merges
    :meth:`_plan_base`, its trial fit passes the trial's estimator through
    :meth:`_trial_base`, its private fit builds each model with
    :meth:`_new_base`, and its ``mechanism_params_`` records
    :meth:`_base_params`.
    """

    _default_neighbors_class = KNeighborsClassifier
    _trees_min_rows = 60

    def _default_estimator(self):
        # The template outside a fit (tags, routing, the estimator checks'
        # introspection); every fit resolves its base with _plan_base.
        return self._default_neighbors_class(n_neighbors=CLEAN_NEIGHBORS)

    def _vote_inflation(self, n_classes):
        raise NotImplementedError

    def _plan_base(self, X, n_samples, n_classes):
        """``{"base": template}``: the base of a fit whose smallest training set
        has ``n_samples`` rows of ``X``, the user's estimator or the resolved default."""
        if self.estimator is not None:
            return {"base": self.estimator}
        inflation = self._vote_inflation(n_classes)
        if not issparse(X) and default_uses_trees(n_samples, n_classes, inflation,
                                                   self._trees_min_rows):
            return {"base": HistGradientBoostingClassifier()}
        k = default_n_neighbors(n_samples, n_classes, inflation)
        return {"base": self._default_neighbors_class(n_neighbors=k)}

    def _base_params(self, plan):
        """What ``mechanism_params_`` records of the planned base: the default's
        class name and ``n_neighbors`` (None for the trees; both None for a
        user's estimator)."""
        if self.estimator is not None:
            return {"default_base": None, "n_neighbors": None}
        base = plan["base"]
        return {"default_base": type(base).__name__,
                "n_neighbors": base.get_params().get("n_neighbors")}

    def _trial_template(self, plan):
        # The trial fits the planned base: the trees where the fit will use them.
        return plan["base"]

    def _trial_base(self, estimator, n_rows, n_classes):
        """The trial fit's estimator: a default k-NN gets the rule's value for the
        trial's own rows (the real fit's when the trial uses the whole smallest
        training set, which is when the trial also predicts)."""
        if self.estimator is not None or "n_neighbors" not in estimator.get_params():
            return estimator
        k = default_n_neighbors(n_rows, n_classes, self._vote_inflation(n_classes))
        return estimator.set_params(n_neighbors=k)

    @staticmethod
    def _new_base(plan, rng):
        """A fresh, seeded clone of the planned base estimator."""
        return seed_estimator(clone(plan["base"]), rng)
