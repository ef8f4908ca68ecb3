"""BudgetAccountant(slack=...): a ceiling checked on the tight composition, atomically."""

import multiprocessing
import pickle
import sys
import threading
import time
import warnings

import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KNeighborsClassifier

from sklearn_labeldp.accounting import (
    BudgetAccountant,
    BudgetError,
    PrivacyBudget,
    PrivacySpend,
    _accountant,
)
from sklearn_labeldp.classifiers import RRWithPriorClassifier
from sklearn_labeldp.datasets import make_circle_gaussians

dp_accounting = pytest.importorskip("dp_accounting")

SLACK = 1e-6
RR = PrivacySpend.randomized_response(0.5, 3)
# The PLD composition of n ternary randomized responses at epsilon 0.5, at delta 1e-6,
# is 8.69 for n = 19, 8.97 for n = 20 and 9.37 for n = 21 (the sum: 0.5 n).
FIT_UNDER_9 = 20
needs_fork = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs the fork start method"
)


def _reference(n):
    """The tight composition of n ternary RRs, computed here with dp-accounting directly."""
    pld = dp_accounting.pld.privacy_loss_distribution
    noise = 3 / (2.718281828459045**0.5 + 2)
    one = pld.from_randomized_response(
        noise, 3, neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE
    )
    return one.self_compose(n).get_epsilon_for_delta(SLACK)


def _fill(acc, spend=RR, attempts=30):
    fitted = 0
    for _ in range(attempts):
        try:
            acc.spend(spend)
        except BudgetError:
            break
        fitted += 1
    return fitted


def test_the_reference_boundary_is_between_20_and_21():
    assert _reference(FIT_UNDER_9) < 9.0 < _reference(FIT_UNDER_9 + 1)
    assert 0.5 * (FIT_UNDER_9 - 2) == 9.0  # the sum admits 18


@pytest.mark.parametrize("persistent", [False, True])
def test_slack_admits_what_the_tight_composition_fits(tmp_path, persistent):
    path = tmp_path / "ledger.sqlite" if persistent else None
    acc = BudgetAccountant(epsilon=9.0, delta=1e-6, slack=SLACK, path=path)
    assert _fill(acc) == FIT_UNDER_9  # the 21st spend is refused...
    assert len(acc.spends) == FIT_UNDER_9  # ...and not recorded
    with pytest.raises(BudgetError, match="tight composition at slack=1e-06"):
        acc.check(RR)
    assert acc.total() == PrivacyBudget(10.0)  # the sum is over the ceiling
    tight = acc.total(slack=SLACK)
    assert tight.delta == SLACK and tight.epsilon <= 9.0
    assert tight.epsilon == pytest.approx(_reference(FIT_UNDER_9), rel=1e-3)
    assert acc.remaining() == PrivacyBudget(9.0 - tight.epsilon, 0.0)

    plain = BudgetAccountant(epsilon=9.0, delta=1e-6)
    assert _fill(plain) == 18
    assert plain.remaining() == PrivacyBudget(0.0, 1e-6)


def test_a_grid_search_of_19_fits_fits_only_with_slack():
    X, y = make_circle_gaussians(150, 3, sigma=0.3, random_state=0)
    grid = {"estimator__n_neighbors": list(range(1, 10))}  # 9 x 2 folds + refit = 19

    def search(acc):
        clf = RRWithPriorClassifier(KNeighborsClassifier(), epsilon=0.5, classes=[0, 1, 2],
                                    random_state=0, accountant=acc)
        return GridSearchCV(clf, grid, cv=2, error_score="raise").fit(X, y)

    acc = BudgetAccountant(epsilon=9.0, delta=1e-6, slack=SLACK)
    search(acc)
    assert len(acc.spends) == 19 and acc.total().epsilon == 9.5
    assert acc.total(slack=SLACK).epsilon < 9.0
    with pytest.raises(BudgetError):
        search(BudgetAccountant(epsilon=9.0, delta=1e-6))


def test_the_tight_route_pays_its_delta():
    # An approximate-DP spend takes the delta the slack needed: only the sum remains.
    acc = BudgetAccountant(epsilon=9.0, delta=1e-6, slack=SLACK)
    acc.spend(0.5, 1e-8)
    assert _fill(acc) == 17
    # A ceiling delta above slack + the recorded deltas keeps the tight route open.
    roomy = BudgetAccountant(epsilon=9.0, delta=2e-6, slack=SLACK)
    roomy.spend(0.5, 1e-8)
    assert 17 < _fill(roomy) < FIT_UNDER_9


def test_without_dp_accounting_the_ceiling_is_the_sum(monkeypatch):
    monkeypatch.setitem(sys.modules, "dp_accounting", None)  # import raises ImportError
    acc = BudgetAccountant(epsilon=9.0, delta=1e-6, slack=SLACK)
    assert _fill(acc) == 18
    assert acc.total(slack=SLACK) == PrivacyBudget(9.0, SLACK)


@pytest.mark.parametrize(
    "slack, delta, match",
    [(0.0, 1e-6, "open interval"), (1.0, 1.0, "open interval"), (2e-6, 1e-6, "exceeds")],
)
def test_bad_slack_is_refused(slack, delta, match):
    with pytest.raises(ValueError, match=match):
        BudgetAccountant(epsilon=1.0, delta=delta, slack=slack)


def test_slack_is_kept_by_handles_and_persistent_ledgers(tmp_path):
    acc = BudgetAccountant(epsilon=9.0, delta=1e-6, slack=SLACK)
    assert acc.slack == SLACK and "slack=1e-06" in repr(acc)
    assert pickle.loads(pickle.dumps(acc)).slack == SLACK
    assert BudgetAccountant().slack is None and "slack" not in repr(BudgetAccountant())

    path = tmp_path / "ledger.sqlite"
    BudgetAccountant(epsilon=9.0, delta=1e-6, slack=SLACK, path=path).spend(RR)
    for slack in (None, 5e-7):
        with pytest.raises(ValueError, match="slack"):
            BudgetAccountant(epsilon=9.0, delta=1e-6, slack=slack, path=path)
    again = BudgetAccountant(epsilon=9.0, delta=1e-6, slack=SLACK, path=path)
    assert _fill(again) == FIT_UNDER_9 - 1
    BudgetAccountant(epsilon=9.0, delta=1e-6, path=tmp_path / "plain.sqlite")
    with pytest.raises(ValueError, match="slack=None"):
        BudgetAccountant(epsilon=9.0, delta=1e-6, slack=SLACK, path=tmp_path / "plain.sqlite")


def _slow_tight(monkeypatch, seconds):
    # Widen the window between reading the ledger and appending to it, so that an
    # unsynchronised check-and-spend would be caught overspending.
    original = _accountant.tight_total

    def slow(*args):
        time.sleep(seconds)
        return original(*args)

    monkeypatch.setattr(_accountant, "tight_total", slow)


@pytest.mark.parametrize("persistent", [False, True])
def test_tight_check_and_spend_is_atomic_under_threads(tmp_path, monkeypatch, persistent):
    _slow_tight(monkeypatch, 2e-3)
    path = tmp_path / "ledger.sqlite" if persistent else None
    acc = BudgetAccountant(epsilon=9.0, delta=1e-6, slack=SLACK, path=path)
    n_threads = 8
    barrier = threading.Barrier(n_threads)
    successes, errors = [], []

    def worker():
        barrier.wait()
        for _ in range(4):  # 32 attempts at once
            try:
                acc.spend(RR)
                successes.append(1)
            except BudgetError:
                pass
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(successes) == FIT_UNDER_9 and len(acc.spends) == FIT_UNDER_9


def _spend_worker(payload, n, barrier, queue):
    # Reach the ledger as a joblib worker would: through a pickle of the accountant.
    from sklearn_labeldp.accounting import _accountant

    acc = pickle.loads(payload)
    original = _accountant.tight_total

    def slow(*args):
        time.sleep(0.002)
        return original(*args)

    _accountant.tight_total = slow
    barrier.wait()
    successes = 0
    for _ in range(n):
        try:
            acc.spend(RR)
            successes += 1
        except BudgetError:
            pass
    queue.put(successes)


@needs_fork
def test_four_processes_never_exceed_the_tight_ceiling(tmp_path):
    acc = BudgetAccountant(epsilon=9.0, delta=1e-6, slack=SLACK, path=tmp_path / "l.sqlite")
    ctx = multiprocessing.get_context("fork")
    barrier, queue = ctx.Barrier(4), ctx.Queue()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads running
        procs = [
            ctx.Process(target=_spend_worker, args=(pickle.dumps(acc), 8, barrier, queue))
            for _ in range(4)
        ]
        for proc in procs:  # 32 attempts against room for 20
            proc.start()
    successes = [queue.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    assert sum(successes) == FIT_UNDER_9 and len(acc.spends) == FIT_UNDER_9
    assert acc.total(slack=SLACK).epsilon <= 9.0
