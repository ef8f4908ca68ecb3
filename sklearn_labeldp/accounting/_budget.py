"""Privacy budgets, spend records and their composition."""

import math
from dataclasses import dataclass, field

from ..utils import check_nonnegative
from ._descriptions import DESCRIPTIONS, MechanismDescription
from ._gaussian import gaussian_epsilon
from ._subsampled import _check_subsampled_gaussian, subsampled_gaussian_epsilon

__all__ = ["PrivacyBudget", "PrivacySpend", "compose_parallel", "compose_sequential"]


@dataclass(frozen=True)
class PrivacyBudget:
    """An (epsilon, delta) differential-privacy guarantee or allowance.

    ``delta = 0`` is pure eps-DP. ``epsilon`` may be ``inf`` (no guarantee),
    which is how an unlimited accountant is expressed.

    Parameters
    ----------
    epsilon : float
        Nonnegative.
    delta : float, default=0.0
        In ``[0, 1]``.

    Examples
    --------
    >>> from sklearn_labeldp.accounting import PrivacyBudget
    >>> PrivacyBudget(1.0) + PrivacyBudget(0.5, 1e-6)
    PrivacyBudget(epsilon=1.5, delta=1e-06)
    """

    epsilon: float
    delta: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_nonnegative(self.epsilon, "epsilon"))
        object.__setattr__(self, "delta", check_nonnegative(self.delta, "delta", upper=1.0))

    def __add__(self, other):
        """Sequential (basic) composition."""
        if not isinstance(other, PrivacyBudget):
            return NotImplemented
        return compose_sequential([self, other])

    def covers(self, other, *, rtol=1e-12):
        """Whether ``other`` fits within this budget (up to rounding ``rtol``)."""
        return other.epsilon <= self.epsilon * (1 + rtol) and other.delta <= self.delta * (1 + rtol)


def compose_sequential(budgets):
    """Basic sequential composition: epsilons add, deltas add (capped at 1).

    Parameters
    ----------
    budgets : iterable of PrivacyBudget

    Returns
    -------
    PrivacyBudget

    Examples
    --------
    >>> from sklearn_labeldp.accounting import PrivacyBudget, compose_sequential
    >>> compose_sequential([PrivacyBudget(1.0), PrivacyBudget(2.0)])
    PrivacyBudget(epsilon=3.0, delta=0.0)
    """
    budgets = list(budgets)
    return PrivacyBudget(
        math.fsum(b.epsilon for b in budgets), min(1.0, math.fsum(b.delta for b in budgets))
    )


def compose_parallel(budgets):
    """Parallel composition over disjoint, label-independent parts: the maximum.

    Valid only when every example's label is used by exactly one part and the
    partition does not depend on the labels (McSherry 2009).

    Parameters
    ----------
    budgets : iterable of PrivacyBudget

    Returns
    -------
    PrivacyBudget

    Examples
    --------
    >>> from sklearn_labeldp.accounting import PrivacyBudget, compose_parallel
    >>> compose_parallel([PrivacyBudget(1.0), PrivacyBudget(2.0, 1e-6)])
    PrivacyBudget(epsilon=2.0, delta=1e-06)
    """
    budgets = list(budgets)
    if not budgets:
        return PrivacyBudget(0.0)
    return PrivacyBudget(max(b.epsilon for b in budgets), max(b.delta for b in budgets))


_COMPOSERS = {"sequential": compose_sequential, "parallel": compose_parallel}

# Above this epsilon a Gaussian record goes without its ``gaussian`` description
# (composed by the basic sum): the privacy loss distribution of so large a Gaussian
# would need a grid of billions of points (dp-accounting allocates hundreds of GiB).
_DESCRIBED_EPSILON = 700.0


@dataclass(frozen=True)
class PrivacySpend:
    """A structured record of what a fit spent, composable from fitted models alone.

    A leaf names one mechanism run; an inner node composes its ``parts``
    sequentially or in parallel. Use :meth:`leaf` and :meth:`compose` to build
    records: the budget of an inner node is derived from its parts.

    Attributes
    ----------
    mechanism : str
        What ran, e.g. ``"RRWithPrior"`` or ``"LP-MST"``.
    budget : PrivacyBudget
    params : dict
        Free-form public parameters of the run (eps per stage, sizes, ...).
    composition : {"leaf", "sequential", "parallel"}
    parts : tuple of PrivacySpend
    description : MechanismDescription or None
        A leaf's exact description of its mechanism, or ``None``.

    Notes
    -----
    A leaf's ``description`` says exactly which mechanism ran:
    ``("subsampled_gaussian", (noise_multiplier, sample_rate, steps))`` a
    DP-SGD run (see :meth:`subsampled_gaussian`), whose budget is checked
    against dp-accounting's bound at its ``delta`` and which
    :meth:`BudgetAccountant.total_rdp_approx_dp` composes in Renyi DP;
    ``"subsampled_gaussian_label"`` the same run accounted for a label change
    (replace one), ``("randomized_response", (epsilon, n_outputs))`` a K-ary
    randomized response (:meth:`randomized_response`), ``("gaussian", mu)`` a
    Gaussian mechanism of sensitivity ``mu`` noise stds (:meth:`gaussian`),
    ``("laplace", (epsilon, count))`` ``count`` Laplace releases at
    ``epsilon`` each (:meth:`laplace`), ``("rappor", epsilon)`` RAPPOR's unary
    encoding (:meth:`rappor`) and ``("bounded_range", epsilon)`` a
    bounded-range selection (:meth:`bounded_range`). The record's budget must
    be one its description implies, and :meth:`BudgetAccountant.total` with a
    ``slack`` composes such records exactly (privacy loss distributions). An
    unknown kind is refused, and so is a description kind given as a free-form
    parameter.

    Examples
    --------
    >>> from sklearn_labeldp.accounting import PrivacySpend
    >>> stages = [PrivacySpend.leaf("RRWithPrior", 1.0, stage=t) for t in range(2)]
    >>> PrivacySpend.compose("LP-MST", stages, "parallel").budget
    PrivacyBudget(epsilon=1.0, delta=0.0)
    """

    mechanism: str
    budget: PrivacyBudget
    params: dict = field(default_factory=dict)
    composition: str = "leaf"
    parts: tuple = ()
    description: MechanismDescription | None = None

    def __post_init__(self):
        # The accountant trusts ``budget``: refuse records that understate their parts.
        if not isinstance(self.budget, PrivacyBudget):
            raise TypeError(f"budget must be a PrivacyBudget; got {self.budget!r}.")
        if self.composition == "leaf":
            if self.parts:
                raise ValueError("a leaf PrivacySpend has no parts.")
            if "rho" in self.params:
                check_nonnegative(self.params["rho"], "params['rho']")
            misplaced = [key for key in self.params if key in DESCRIPTIONS]
            if misplaced:
                kind = misplaced[0]
                constructor = (f" (or build the record with PrivacySpend.{kind})"
                               if hasattr(PrivacySpend, kind) else "")
                raise ValueError(
                    f"the record {self.mechanism!r} names the description kind {kind!r} "
                    f"among its free-form params; pass it as description=({kind!r}, "
                    f"value){constructor}."
                )
            if self.description is not None:
                if not isinstance(self.description, MechanismDescription):
                    raise TypeError("description must be a MechanismDescription; got "
                                    f"{self.description!r}.")
                _check_described(self.mechanism, self.description, self.budget)
            return
        if self.description is not None:
            raise ValueError("only a leaf PrivacySpend has a description.")
        if self.composition not in _COMPOSERS:
            raise ValueError(
                f"composition must be 'leaf', 'sequential' or 'parallel'; got {self.composition!r}."
            )
        if not all(isinstance(p, PrivacySpend) for p in self.parts):
            raise TypeError("parts must be PrivacySpend records.")
        composed = _COMPOSERS[self.composition](p.budget for p in self.parts)
        if not _equal(self.budget, composed):
            raise ValueError(
                f"budget {self.budget} is not the {self.composition} composition of its "
                f"parts, {composed}: an inner record's budget is computed from its parts "
                "(build it with PrivacySpend.compose)."
            )

    @property
    def epsilon(self):
        return self.budget.epsilon

    @property
    def delta(self):
        return self.budget.delta

    @property
    def rho(self):
        """The zCDP parameter this record guarantees, or ``None`` if it guarantees none.

        A leaf with ``params["rho"]`` (a Gaussian mechanism) is ``rho``-zCDP; a
        pure ``epsilon``-DP leaf (``delta = 0``) is ``epsilon^2 / 2``-zCDP (Bun
        and Steinke 2016, Prop. 1.4); the smaller applies when both do. Any
        other approximate-DP leaf has no zCDP guarantee. Sequential nodes add
        their parts' rho, parallel nodes take the maximum.

        Examples
        --------
        >>> from sklearn_labeldp.accounting import PrivacySpend
        >>> PrivacySpend.leaf("RR", 1.0).rho
        0.5
        >>> PrivacySpend.leaf("Gaussian", 3.0, 1e-6, rho=0.2).rho
        0.2
        >>> PrivacySpend.leaf("other", 1.0, 1e-6).rho is None
        True
        """
        if self.composition == "leaf":
            bounds = []
            if "rho" in self.params:
                bounds.append(float(self.params["rho"]))
            if self.budget.delta == 0:
                bounds.append(self.budget.epsilon**2 / 2.0)
            return min(bounds) if bounds else None
        rhos = [p.rho for p in self.parts]
        if any(r is None for r in rhos):
            return None
        if self.composition == "sequential":
            return math.fsum(rhos)
        return max(rhos, default=0.0)

    def __setstate__(self, state):
        # Records pickled before descriptions had their own field (ledgers written
        # by sklearn-labeldp before 0.1) kept the description among ``params``: read
        # them as the same description. Kept until sklearn-labeldp 0.2.
        if "description" not in state:
            params = dict(state.get("params", {}))
            kinds = [key for key in params if key in DESCRIPTIONS]
            state = {**state, "params": params, "description": (
                MechanismDescription(kinds[0], params.pop(kinds[0])) if kinds else None)}
        for name, value in state.items():
            object.__setattr__(self, name, value)

    @classmethod
    def leaf(cls, mechanism, epsilon, delta=0.0, *, description=None, **params):
        """One run of one mechanism.

        Parameters
        ----------
        mechanism : str
            What ran.
        epsilon, delta : float
            Its guarantee.
        description : MechanismDescription or (kind, value) tuple, optional
            The mechanism's exact description (see :class:`MechanismDescription`);
            the budget must be one it implies.
        **params
            Free-form public parameters of the run.

        Returns
        -------
        PrivacySpend
        """
        if description is not None and not isinstance(description, MechanismDescription):
            description = MechanismDescription(*description)
        return cls(mechanism, PrivacyBudget(epsilon, delta), dict(params),
                   description=description)

    @classmethod
    def subsampled_gaussian(
        cls,
        noise_multiplier,
        sample_rate,
        steps,
        delta,
        *,
        method="rdp",
        mechanism="DP-SGD",
        **params,
    ):
        """A DP-SGD run: ``steps`` Poisson-subsampled Gaussian releases, reported at ``delta``.

        The budget is :func:`subsampled_gaussian_epsilon` at ``delta`` (add or
        remove one example, as in Abadi et al. 2016). The record is described
        by ``("subsampled_gaussian", (noise_multiplier, sample_rate, steps))``, so
        that :meth:`BudgetAccountant.total_rdp_approx_dp` can compose the run
        in Renyi DP with other spends, and, for ``sample_rate = 1``, the exact
        ``"rho" = steps / (2 noise_multiplier^2)`` (Bun and Steinke 2016).

        Parameters
        ----------
        noise_multiplier : float
            Noise std divided by the clipping norm, > 0.
        sample_rate : float
            Poisson sampling probability in ``(0, 1]``.
        steps : int
            Number of steps, >= 1.
        delta : float
            The delta at which the run is reported, in (0, 1).
        method : {"rdp", "pld"}, default="rdp"
            Accountant for the reported epsilon.
        mechanism : str, default="DP-SGD"
        **params
            Further public parameters to record.

        Returns
        -------
        PrivacySpend

        Examples
        --------
        >>> from sklearn_labeldp.accounting import PrivacySpend
        >>> spend = PrivacySpend.subsampled_gaussian(4.0, 0.01, 10_000, 1e-5)
        >>> round(spend.epsilon, 2), spend.delta, spend.rho is None
        (1.04, 1e-05, True)
        """
        epsilon = subsampled_gaussian_epsilon(
            noise_multiplier, sample_rate, steps, delta, method=method
        )
        value = _check_subsampled_gaussian(noise_multiplier, sample_rate, steps)
        if value[1] == 1:
            params["rho"] = value[2] / (2.0 * value[0] ** 2)
        return cls.leaf(mechanism, epsilon, delta,
                        description=("subsampled_gaussian", value), **params)

    @classmethod
    def randomized_response(cls, epsilon, n_outputs, *, mechanism="randomized response",
                            **params):
        """K-ary randomized response (Warner 1965) at ``epsilon``: a described pure leaf.

        The record is described by ``("randomized_response", (epsilon,
        n_outputs))``, the mechanism's exact description, so that :meth:`BudgetAccountant.total`
        with a ``slack`` composes it as K-ary randomized response rather than
        as the worst ``epsilon``-DP mechanism (binary randomized response).

        Examples
        --------
        >>> from sklearn_labeldp.accounting import PrivacySpend
        >>> PrivacySpend.randomized_response(0.5, 3).description
        MechanismDescription(kind='randomized_response', value=(0.5, 3))
        """
        return cls.leaf(mechanism, epsilon, description=(
            "randomized_response", (float(epsilon), n_outputs)), **params)

    @classmethod
    def gaussian(cls, mu, delta, *, mechanism="Gaussian mechanism", **params):
        """A Gaussian mechanism of sensitivity ``mu`` noise stds, reported at ``delta``.

        The budget is the exact :func:`gaussian_epsilon` at ``delta`` (Balle
        and Wang 2018). The record is described by ``("gaussian", mu)``, the
        dominating pair ``N(0, 1)``, ``N(mu, 1)``, and ``params`` records
        ``"rho": mu^2 / 2`` (zCDP, Bun and
        Steinke 2016), so that zCDP totals keep working. Above ``epsilon =
        700`` the description is left out (composed by the basic sum): the
        privacy loss distribution of so large a Gaussian would need a grid of
        billions of points.

        Examples
        --------
        >>> from sklearn_labeldp.accounting import PrivacySpend
        >>> spend = PrivacySpend.gaussian(1.0, 1e-5)
        >>> round(spend.epsilon, 3), spend.description.value, spend.rho
        (4.377, 1.0, 0.5)
        """
        mu = check_nonnegative(mu, "mu")
        epsilon = gaussian_epsilon(mu, delta)
        params.setdefault("rho", mu * mu / 2.0)
        return cls.leaf(mechanism, epsilon, delta, description=(
            ("gaussian", mu) if epsilon < _DESCRIBED_EPSILON else None), **params)

    @classmethod
    def laplace(cls, epsilon, count=1, *, mechanism="Laplace mechanism", **params):
        """``count`` Laplace releases, each moved by at most its noise scale over ``epsilon``.

        Each release adds Laplace noise of scale ``b`` to a quantity that a
        label change moves by at most ``epsilon b`` (Dwork et al. 2006); the
        record is pure ``count * epsilon``-DP (basic composition) and is
        described by ``("laplace", (epsilon, count))``, whose dominating pair is the product
        of ``count`` pairs ``Lap(0, 1)``, ``Lap(epsilon, 1)``: a one-hot label
        plus Laplace noise (ALIBI, Malek et al. 2021) moves in two
        coordinates, ``count = 2`` at ``epsilon / 2`` each.
        :meth:`BudgetAccountant.total` with a ``slack`` composes it exactly.

        Examples
        --------
        >>> from sklearn_labeldp.accounting import PrivacySpend
        >>> spend = PrivacySpend.laplace(0.5, 2)
        >>> spend.epsilon, spend.description.value
        (1.0, (0.5, 2))
        """
        epsilon = float(check_nonnegative(epsilon, "epsilon"))
        return cls.leaf(mechanism, epsilon * count, description=("laplace", (epsilon, count)),
                        **params)

    @classmethod
    def rappor(cls, epsilon, *, mechanism="RAPPOR", **params):
        """RAPPOR unary encoding of a label at ``epsilon`` (Erlingsson, Pihur and Korolova 2014).

        Every bit of the one-hot vector is binary randomized response at
        ``epsilon / 2``; a label change moves two bits, so the exact dominating
        pair is the product of two binary randomized responses at ``epsilon /
        2``. The record is described by ``("rappor", epsilon)``, which
        :meth:`BudgetAccountant.total` with a ``slack`` composes as such
        rather than as binary randomized response at ``epsilon``.

        Examples
        --------
        >>> from sklearn_labeldp.accounting import PrivacySpend
        >>> PrivacySpend.rappor(2.0).description
        MechanismDescription(kind='rappor', value=2.0)
        """
        return cls.leaf(mechanism, epsilon, description=("rappor", float(epsilon)), **params)

    @classmethod
    def bounded_range(cls, epsilon, *, mechanism="exponential mechanism", **params):
        """An ``epsilon``-bounded-range selection, such as the exponential mechanism.

        A mechanism is ``epsilon``-bounded-range when, for every pair of
        neighbours, its privacy loss takes values in an interval of length
        ``epsilon`` (Durfee and Rogers 2019); the exponential mechanism at
        ``epsilon`` (McSherry and Talwar 2007, scores of sensitivity ``Delta``
        scaled by ``epsilon / (2 Delta)``) is. The record is pure
        ``epsilon``-DP and is described by ``("bounded_range", epsilon)``: every such
        mechanism is a post-processing of a two-outcome pair with losses at
        the ends of its interval (Dong, Durfee and Rogers 2020), and the upper
        envelope of these pairs' privacy profiles, ``delta(e) = (e^(epsilon/2)
        - e^(e/2))^2 / (e^epsilon - 1)`` on ``[-epsilon, epsilon]``, is the
        profile of one pair, whose privacy loss has the density ``e^((epsilon +
        l) / 2) / (2 (e^epsilon - 1))`` on ``[-epsilon, epsilon]``: a
        dominating pair (Zhu, Dong and Wang 2022) through which
        :meth:`BudgetAccountant.total` with a ``slack`` composes such records
        more tightly than pure ``epsilon``-DP ones.

        Examples
        --------
        >>> from sklearn_labeldp.accounting import PrivacySpend
        >>> spend = PrivacySpend.bounded_range(0.5)
        >>> spend.epsilon, spend.description.value
        (0.5, 0.5)
        """
        return cls.leaf(mechanism, epsilon, description=(
            "bounded_range", float(check_nonnegative(epsilon, "epsilon"))), **params)

    @classmethod
    def compose(cls, mechanism, parts, composition, **params):
        """Compose ``parts`` with ``composition`` in {"sequential", "parallel"}."""
        if composition not in _COMPOSERS:
            raise ValueError(
                f"composition must be 'sequential' or 'parallel'; got {composition!r}."
            )
        parts = tuple(parts)
        if not all(isinstance(p, PrivacySpend) for p in parts):
            raise TypeError("parts must be PrivacySpend records.")
        budget = _COMPOSERS[composition](p.budget for p in parts)
        return cls(mechanism, budget, dict(params), composition, parts)


# A record's description (its MechanismDescription, a kind of
# _descriptions.DESCRIPTIONS and a value) is the one source of its budget: the row maps the
# description's value and the record's delta to the budget(s) it implies, the rule
# the estimators use to build their records. A record stating any other budget is
# refused, so that the plain sum (its budget) and the tight composition (its
# description) can never say different things. Several budgets for one row: a
# record may be built from any one of them (DP-SGD under add/remove:
# dp-accounting's RDP or PLD bound). The relative tolerance of the comparison
# (root finding, a sum of parts).
_RTOL = 1e-9


def _equal(budget, other):
    return math.isclose(budget.epsilon, other.epsilon, rel_tol=_RTOL) and math.isclose(
        budget.delta, other.delta, rel_tol=_RTOL)


def _check_described(mechanism, description, budget):
    """Refuse a record whose budget is not one that its description implies."""
    differing = []
    for epsilon, delta in description.implied(budget.delta):
        other = PrivacyBudget(epsilon, delta)
        if _equal(budget, other):
            return
        differing.append(str(other))
    raise ValueError(
        f"the record {mechanism!r} states {budget}, but its description "
        f"{description.kind}={description.value!r} "
        f"implies {' or '.join(differing)}: a described record's budget is computed from "
        "its description (the PrivacySpend constructor of that name builds it); leave the "
        "description out to record an undescribed budget."
    )
