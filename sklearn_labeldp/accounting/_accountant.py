"""A ledger of privacy spends with an atomic check-and-spend."""

import math
import threading

from ..exceptions import BudgetError
from ._budget import PrivacyBudget, PrivacySpend, compose_sequential

__all__ = ["BudgetAccountant"]


class BudgetAccountant:
    """Track privacy spends against a ceiling, composing them sequentially.

    Estimators given an ``accountant`` charge it with their whole planned spend
    before they touch any label; if the spend does not fit,
    :class:`~sklearn_labeldp.exceptions.BudgetError` is raised and nothing is
    recorded. Check and record happen under one lock,
    so concurrent threads can never jointly overspend.

    Spends compose by basic sequential composition (epsilons and deltas add):
    valid for any sequence of fits on the same labels, adaptive or not.

    Parameters
    ----------
    epsilon : float, default=inf
        Ceiling on the total epsilon; ``inf`` records without limiting epsilon.
    delta : float, default=0.0
        Ceiling on the total delta, in ``[0, 1]``: the default admits pure-DP
        spends only; ``BudgetAccountant(math.inf, 1.0)`` limits nothing.

    Attributes
    ----------
    spends : list of PrivacySpend
        Every recorded spend, in order.

    Notes
    -----
    The ledger lives in this object's memory: a copy (``copy.deepcopy``,
    ``pickle``, ``sklearn.base.clone`` of an estimator holding it, a worker
    process) records on its own copy, not on this one.

    Examples
    --------
    >>> from sklearn_labeldp.accounting import BudgetAccountant
    >>> acc = BudgetAccountant(epsilon=2.0)
    >>> acc.spend(1.5)
    >>> acc.remaining()
    PrivacyBudget(epsilon=0.5, delta=0.0)
    >>> acc.spend(1.0)
    Traceback (most recent call last):
    ...
    sklearn_labeldp.exceptions.BudgetError: spending (epsilon=1.0, delta=0.0) would exceed ...
    """

    def __init__(self, epsilon=math.inf, delta=0.0):
        self._ceiling = PrivacyBudget(epsilon, delta)
        self.spends = []
        self._lock = threading.Lock()

    @property
    def epsilon(self):
        """Ceiling on total epsilon."""
        return self._ceiling.epsilon

    @property
    def delta(self):
        """Ceiling on total delta."""
        return self._ceiling.delta

    def __repr__(self):
        return f"BudgetAccountant(epsilon={self.epsilon!r}, delta={self.delta!r})"

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def total(self):
        """Everything spent so far, composed sequentially.

        Returns
        -------
        PrivacyBudget
        """
        with self._lock:
            return compose_sequential(s.budget for s in self.spends)

    def remaining(self):
        """What can still be spent.

        Returns
        -------
        PrivacyBudget
        """
        spent = self.total()
        return PrivacyBudget(
            max(0.0, self.epsilon - spent.epsilon), max(0.0, self.delta - spent.delta)
        )

    def check(self, epsilon, delta=0.0):
        """Raise :class:`~sklearn_labeldp.exceptions.BudgetError` if a spend would not fit.

        Nothing is recorded.

        Parameters
        ----------
        epsilon : float or PrivacySpend
        delta : float, default=0.0
        """
        spend = self._as_spend(epsilon, delta)
        with self._lock:
            self._check_locked(spend.budget)

    def spend(self, epsilon, delta=0.0):
        """Record a spend if it fits the ceiling, atomically; else raise BudgetError.

        Parameters
        ----------
        epsilon : float or PrivacySpend
            The epsilon spent, or a structured record (then ``delta`` is ignored).
        delta : float, default=0.0
        """
        spend = self._as_spend(epsilon, delta)
        with self._lock:
            self._check_locked(spend.budget)
            self.spends.append(spend)

    @staticmethod
    def _as_spend(epsilon, delta):
        if isinstance(epsilon, PrivacySpend):
            if delta != 0:
                raise ValueError("pass delta inside the PrivacySpend record, not separately.")
            return epsilon
        return PrivacySpend.leaf("user", epsilon, delta)

    def _check_locked(self, budget):
        spent = compose_sequential(s.budget for s in self.spends)
        if not self._ceiling.covers(spent + budget):
            raise BudgetError(
                f"spending (epsilon={budget.epsilon}, delta={budget.delta}) would exceed "
                f"the accountant's budget (epsilon={self.epsilon}, delta={self.delta}); "
                f"already spent (epsilon={spent.epsilon}, delta={spent.delta})."
            )
