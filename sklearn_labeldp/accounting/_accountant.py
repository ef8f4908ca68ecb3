"""A handle on a ledger of privacy spends, with an atomic check-and-spend."""

import math

from ..exceptions import BudgetError
from ..utils import check_positive, check_unit_interval
from ._budget import PrivacyBudget, PrivacySpend, compose_sequential
from ._dask_ledger import _DaskLedger
from ._ledger import _MemoryLedger, _SQLiteLedger
from ._pld import Composition, tight_total
from ._subsampled import _rdp_epsilon
from ._zcdp import zcdp_to_approx_dp

__all__ = ["BudgetAccountant"]

# The ceiling of an accountant that limits nothing.
_UNLIMITED = PrivacyBudget(math.inf, 1.0)


class BudgetAccountant:
    """Track privacy spends against a ceiling, composing them sequentially.

    Estimators given an ``accountant`` charge it with their whole planned spend
    before they touch any label; if the spend does not fit,
    :class:`~sklearn_labeldp.exceptions.BudgetError` is raised and nothing is
    recorded. Check and record are one atomic step, so concurrent threads (and,
    with a persistent ledger, concurrent processes) can never jointly overspend.

    Spends compose by basic sequential composition (epsilons and deltas add):
    valid for any sequence of fits on the same labels, adaptive or not. The
    ceiling is enforced on that sum, or, for an accountant created with a
    ``slack``, on the tighter of that sum and the exact composition of the
    spends' privacy loss distributions (see :meth:`total`). Parallel
    composition happens inside one spend record (:class:`PrivacySpend`),
    never between recorded spends.

    The accountant is a *handle* on a ledger, and every copy of the handle
    records on the same ledger: ``sklearn.base.clone`` of an estimator holding
    it (so ``GridSearchCV``, ``cross_val_score``, ``clone(pipeline)``),
    ``copy.copy`` and ``copy.deepcopy`` return the accountant itself, and
    ``pickle`` carries a reference to the ledger, not a copy of it.

    Parameters
    ----------
    epsilon : float, default=None
        Ceiling on the total epsilon; ``inf`` records without limiting epsilon.
    delta : float, default=None
        Ceiling on the total delta, in ``[0, 1]``. With neither given (a plain
        ``BudgetAccountant()``) there is no ceiling: every spend is recorded
        (``epsilon=inf, delta=1.0``), or an existing ledger file's stored
        ceiling is adopted. With ``epsilon`` alone, ``delta`` is 0: pure-DP
        spends only.
    path : str or path-like, default=None
        ``None`` keeps the ledger in this process's memory. Otherwise the
        ledger is the SQLite file at ``path`` (created if missing, in WAL
        mode), shared by every accountant and every process that opens it: a
        pickled accountant carries the path, and a worker process reopens the
        file. An existing ledger file keeps the ceiling (and ``slack``) it was
        created with: opening it without ``epsilon`` and ``delta`` adopts that
        ceiling, and opening it with a different ``epsilon``, ``delta`` or
        ``slack`` raises ``ValueError``.
    client : distributed.Client, default=None
        Keep the ledger in this Dask client's scheduler instead (the ``dask``
        extra): the client and every worker of the cluster, on any machine,
        record on it; a worker holds only a handle and appends under a lock
        the scheduler manages. The ceiling stays with the accountant: a
        pickled handle carries it. Give ``path`` or ``client``, not both.
    timeout : float, default=30.0
        Seconds an operation on a persistent or Dask ledger waits for another
        process holding its lock (SQLite's busy timeout, the Dask lock) before
        it fails.
    slack : float, default=None
        ``None`` enforces the ceiling on the basic sum. A delta in (0, 1), at
        most the ceiling's ``delta``, lets the ceiling check use the tight
        composition as well: a spend fits when the basic sum of every recorded
        spend and it fits the ceiling, *or* when their tight composition
        (``total(slack=slack)``: epsilon at ``delta = sum of the deltas +
        slack``) does. Both are valid guarantees of the whole sequence, so the
        ledger then holds whichever is within the ceiling; a grid search of
        many small fits fits under a budget it could not fit under with the
        sum (19 ternary randomized responses at epsilon 0.5: 9.5 summed, 8.69
        composed with ``slack=1e-6``). Without dp-accounting the tight
        composition falls back to the sum at the larger delta, which never
        admits more than the sum alone. A persistent ledger keeps the slack it
        was created with, like its ceiling, and a pickled handle carries it.

    Attributes
    ----------
    spends : list of PrivacySpend
        Every recorded spend, in order (a snapshot, read from the ledger).
    path : str or None
        Absolute path of the persistent ledger, or ``None``.
    slack : float or None
        The delta the ceiling check may spend on the tight composition.

    See Also
    --------
    PrivacySpend : The record a fit charges; its ``rho`` is used by :meth:`total_zcdp`.

    Notes
    -----
    **In-memory ledger** (``path=None``): shared by every copy of the
    accountant *within the process that created it*, under a lock. It cannot be
    reached from another process, so it refuses to be used there rather than
    lose spends: an accountant pickled into a joblib worker (``n_jobs > 1``
    with the default loky backend, which pickles estimators) or into a
    ``multiprocessing`` child, a forked copy, or a pickle of it loaded in
    another process, raises ``RuntimeError`` on any spend or report, telling
    you to pass ``path`` (processes of one machine) or ``client`` (the
    workers of a Dask cluster). Pickles stay loadable (a saved model can
    still predict). ``n_jobs=1`` and the threading backend need neither.

    **Persistent ledger** (``path=...``): each spend is one row, inserted by a
    ``BEGIN IMMEDIATE`` transaction that first reads every recorded spend and
    checks the ceiling, so check-and-spend is atomic across processes. A
    process killed before its transaction commits records nothing (SQLite
    rolls it back and releases the lock); once committed, the spend survives
    any crash (``synchronous=FULL``) and is recorded exactly once, since
    nothing ever retries it. Records are stored with :mod:`pickle`: open only
    ledger files you trust. The file must stay where it was created, on a
    local file system (WAL mode needs shared memory); a ledger that has
    disappeared raises ``RuntimeError`` rather than starting afresh.

    Besides the enforced sum, :meth:`total_zcdp` reports the zCDP composition
    of the spends (``rho`` adds; Gaussian mechanisms record their ``rho``, a
    pure ``epsilon`` spend is ``epsilon^2 / 2``-zCDP) and
    :meth:`total_zcdp_approx_dp` its (epsilon, delta) conversion, often
    tighter than the sum for many small spends.
    :meth:`total_rdp_approx_dp` composes in Renyi DP instead, which also
    covers DP-SGD runs (:meth:`PrivacySpend.subsampled_gaussian`, which have no
    zCDP guarantee unless full-batch). These are reports only.

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
    >>> import copy
    >>> copy.deepcopy(acc) is acc
    True
    """

    def __init__(self, epsilon=None, delta=None, *, path=None, client=None, timeout=30.0,
                 slack=None):
        # None: no ceiling stated (a ledger file's stored one is adopted).
        stated = None if epsilon is None and delta is None else PrivacyBudget(
            math.inf if epsilon is None else epsilon, 0.0 if delta is None else delta)
        timeout = check_positive(timeout, "timeout")
        if slack is not None:
            slack = check_unit_interval(slack, "slack")
        if path is not None and client is not None:
            raise ValueError("give path (an SQLite ledger) or client (a Dask one), not both.")
        self._ceiling = _UNLIMITED if stated is None else stated
        if slack is not None and slack > self._ceiling.delta:
            # The tight composition is stated at delta >= slack: it could never fit.
            raise ValueError(
                f"slack={slack} exceeds the ceiling's delta={self._ceiling.delta}: the "
                "tight composition it buys could never fit; raise delta or drop slack."
            )
        self._slack = slack
        if client is not None:
            self._ledger = _DaskLedger.create(client, timeout)
            key = ("dask", self._ledger.address, self._ledger.name)
        elif path is None:
            self._ledger = _MemoryLedger()
            key = None
        else:
            # An adopted ceiling was checked against the same slack when its file was
            # created (the ledger refuses another slack).
            self._ledger = _SQLiteLedger.open_or_create(path, stated, timeout, slack)
            self._ceiling = self._ledger.ceiling
            key = ("sqlite", self._ledger.path, self._ledger.ledger_id)
        # The tight composition of the ledger so far, extended by each query; one
        # per process for a ledger that processes share (its handles find it).
        self._composition = Composition.shared(key)

    @property
    def epsilon(self):
        """Ceiling on total epsilon."""
        return self._ceiling.epsilon

    @property
    def delta(self):
        """Ceiling on total delta."""
        return self._ceiling.delta

    @property
    def slack(self):
        """The delta the ceiling check may spend on the tight composition, or ``None``."""
        return self._slack

    @property
    def path(self):
        """Absolute path of the persistent ledger, or ``None`` for an in-memory one."""
        return getattr(self._ledger, "path", None)

    @property
    def spends(self):
        """Every recorded spend, in order: a list of :class:`PrivacySpend` (a snapshot)."""
        return self._ledger.records()

    def __repr__(self):
        path = "" if self.path is None else f", path={self.path!r}"
        slack = "" if self._slack is None else f", slack={self._slack!r}"
        return f"BudgetAccountant(epsilon={self.epsilon!r}, delta={self.delta!r}{path}{slack})"

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        # A copy would be a second ledger that silently forgets spends: share instead.
        return self

    def total(self, *, slack=None):
        """Everything spent so far: the basic sum, or with ``slack`` the tight composition.

        Without ``slack``, epsilons and deltas add (basic sequential
        composition), which is what the ceiling is enforced on. With a
        ``slack`` delta, the spends are composed through their privacy loss
        distributions (dp-accounting; Zhu, Dong and Wang 2022) and the result
        is reported at ``delta = sum of the recorded deltas + slack``: each
        spend enters as a dominating pair of its mechanism, read from its
        record (:class:`PrivacySpend`: K-ary randomized response, the Gaussian,
        the subsampled Gaussian of DP-SGD), a pure ``epsilon``-DP spend without
        such a description as binary randomized response at ``epsilon``, the
        worst ``epsilon``-DP mechanism (so that those compose by Kairouz, Oh
        and Viswanath's 2015 optimal composition theorem). A spend that is
        neither (an approximate-DP record without a description, e.g. a
        zCDP-converted one) adds its epsilon to the composition's, as in the
        basic sum. The result is never above the basic sum (which holds at the
        smaller delta), and without dp-accounting (the ``accounting`` extra)
        it is the basic sum at the larger delta. All spends must be guarantees
        for the same relation, the library's label change. The ceiling is
        enforced on the basic sum, or also on this composition at the
        accountant's own ``slack`` when it was created with one.

        Parameters
        ----------
        slack : float, default=None
            Extra delta in (0, 1) to spend on the tight composition; ``None``
            for the basic sum.

        Returns
        -------
        PrivacyBudget

        References
        ----------
        Kairouz, Oh and Viswanath 2015, "The Composition Theorem for
        Differential Privacy".
        Zhu, Dong and Wang 2022, "Optimal Accounting of Differential Privacy
        via Characteristic Function".

        Examples
        --------
        >>> from sklearn_labeldp.accounting import BudgetAccountant, PrivacySpend
        >>> acc = BudgetAccountant()
        >>> for _ in range(19):
        ...     acc.spend(PrivacySpend.randomized_response(0.5, 3))
        >>> acc.total().epsilon
        9.5
        >>> round(acc.total(slack=1e-6).epsilon, 2)
        8.69
        """
        if slack is None:
            rows = self._ledger.rows()
            return compose_sequential(PrivacyBudget(e, d) for e, d, _ in rows)
        return _tight_budget(self.spends, check_unit_interval(slack, "slack"),
                             self._composition)

    def remaining(self):
        """What the ceiling leaves, under the composition its check uses.

        The ceiling minus the basic sum; for an accountant with a ``slack``,
        minus the tight composition at that slack instead when that is within
        the ceiling and leaves more epsilon. Under the tight composition
        epsilons do not add: whether a given spend fits is for :meth:`check`
        to say.

        Returns
        -------
        PrivacyBudget
        """
        spent = self.total()
        if self._slack is not None:
            tight = self.total(slack=self._slack)
            if self._ceiling.covers(tight) and tight.epsilon < spent.epsilon:
                spent = tight
        return PrivacyBudget(
            max(0.0, self.epsilon - spent.epsilon), max(0.0, self.delta - spent.delta)
        )

    def total_zcdp(self):
        """The zCDP composition of every recorded spend: the sum of their ``rho``.

        Each spend's ``rho`` is :attr:`PrivacySpend.rho`: recorded by Gaussian
        mechanisms, ``epsilon^2 / 2`` for pure-DP spends, none for other
        approximate-DP spends.

        Returns
        -------
        float or None
            ``rho`` of the whole sequence (0 when nothing was spent), or
            ``None`` when some spend has no zCDP guarantee.
        """
        rhos = [r for _, _, r in self._ledger.rows()]
        if any(r is None for r in rhos):
            return None
        return math.fsum(rhos)

    def total_zcdp_approx_dp(self, delta, *, method="cks"):
        """The (epsilon, delta) guarantee of :meth:`total_zcdp`, at a chosen ``delta``.

        Parameters
        ----------
        delta : float
            Target delta in (0, 1).
        method : {"cks", "classic"}, default="cks"
            Conversion, as in :func:`zcdp_to_approx_dp`.

        Returns
        -------
        PrivacyBudget or None
            ``None`` when some spend has no zCDP guarantee.

        Examples
        --------
        >>> from sklearn_labeldp.accounting import BudgetAccountant
        >>> acc = BudgetAccountant()
        >>> for _ in range(100):
        ...     acc.spend(0.1)
        >>> acc.total().epsilon, round(acc.total_zcdp(), 12)
        (10.0, 0.5)
        >>> acc.total_zcdp_approx_dp(1e-6).epsilon < 10.0
        True
        """
        rho = self.total_zcdp()
        if rho is None:
            return None
        return PrivacyBudget(zcdp_to_approx_dp(rho, delta, method=method), delta)

    def total_rdp_approx_dp(self, delta):
        """The (epsilon, delta) guarantee of the Renyi-DP composition of every spend.

        Each spend enters as a Renyi-DP curve at dp-accounting's default
        orders: a DP-SGD run (:meth:`PrivacySpend.subsampled_gaussian`) as the
        Poisson-subsampled Gaussian (Mironov, Talwar and Zhang 2019), any
        spend with a zCDP guarantee (:attr:`PrivacySpend.rho`: Gaussian
        mechanisms, and pure ``epsilon``-DP spends at ``epsilon^2 / 2``) as
        ``alpha rho`` at every order ``alpha`` (Bun and Steinke 2016). Renyi DP
        adds at each order under adaptive sequential composition (Mironov
        2017), and the sum converts to (epsilon, delta) with Canonne, Kamath
        and Steinke (2020, Prop. 12). All spends must be guarantees for the
        same neighbouring relation. A report only: the ceiling is enforced on
        :meth:`total`.

        Parameters
        ----------
        delta : float
            Target delta in (0, 1).

        Returns
        -------
        PrivacyBudget or None
            ``None`` when some spend has neither a zCDP nor a subsampled
            Gaussian guarantee.

        Raises
        ------
        ImportError
            If dp-accounting (the ``accounting`` extra) is not installed.
        """
        delta = check_unit_interval(delta, "delta")
        epsilon = _rdp_epsilon(self.spends, delta)
        return None if epsilon is None else PrivacyBudget(epsilon, delta)

    def check(self, epsilon, delta=0.0):
        """Raise :class:`~sklearn_labeldp.exceptions.BudgetError` if a spend would not fit.

        Nothing is recorded.

        Parameters
        ----------
        epsilon : float or PrivacySpend
        delta : float, default=0.0
        """
        spend = self._as_spend(epsilon, delta)
        self._checker(spend)(self._ledger.records())

    def spend(self, epsilon, delta=0.0):
        """Record a spend if it fits the ceiling, atomically; else raise BudgetError.

        Parameters
        ----------
        epsilon : float or PrivacySpend
            The epsilon spent, or a structured record (then ``delta`` is ignored).
        delta : float, default=0.0
        """
        spend = self._as_spend(epsilon, delta)
        self._ledger.append_if(spend, self._checker(spend))

    @staticmethod
    def _as_spend(epsilon, delta):
        if isinstance(epsilon, PrivacySpend):
            if delta != 0:
                raise ValueError("pass delta inside the PrivacySpend record, not separately.")
            return epsilon
        return PrivacySpend.leaf("user", epsilon, delta)

    def _checker(self, spend):
        """``check(records)``: raise BudgetError unless ``records + [spend]`` fits the ceiling."""
        budget = spend.budget

        def check(records):
            spent = compose_sequential(r.budget for r in records)
            if self._ceiling.covers(spent + budget):
                return
            # Only when the sum does not fit: the PLD composition costs milliseconds
            # (randomized response) to seconds (long DP-SGD runs).
            tight = None
            if self._slack is not None:
                tight = _tight_budget([*records, spend], self._slack, self._composition)
                if self._ceiling.covers(tight):
                    return
            composed = "" if tight is None else (
                f", and their tight composition at slack={self._slack} would be "
                f"(epsilon={tight.epsilon}, delta={tight.delta})"
            )
            total = spent + budget
            over = [f"{name}={value}" for name, value, limit in (
                ("epsilon", total.epsilon, self.epsilon), ("delta", total.delta, self.delta))
                if value > limit * (1 + 1e-12)]
            raise BudgetError(
                f"spending (epsilon={budget.epsilon}, delta={budget.delta}) would exceed "
                f"the accountant's budget (epsilon={self.epsilon}, delta={self.delta}); "
                f"already spent (epsilon={spent.epsilon}, delta={spent.delta}){composed}. "
                f"An accountant created with {' and '.join(over)} (or with no ceiling, "
                "BudgetAccountant()) admits it."
            )

        return check


def _tight_budget(spends, slack, composition):
    """The tight composition of ``spends`` at ``slack``, never above their basic sum.

    ``composition`` caches the composed records (see
    :class:`~sklearn_labeldp.accounting._pld.Composition`). Without
    dp-accounting, the basic sum at the larger delta.
    """
    basic = compose_sequential(s.budget for s in spends)
    try:
        import dp_accounting  # noqa: F401
    except ImportError:
        return PrivacyBudget(basic.epsilon, min(1.0, basic.delta + slack))
    epsilon, delta = tight_total(spends, slack, composition)
    return PrivacyBudget(min(basic.epsilon, epsilon), delta)
