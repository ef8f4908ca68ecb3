"""BudgetAccountant: the ledger, its ceiling, atomicity and persistence."""

import copy
import math
import pickle
import threading
import time

import pytest

from sklearn_labeldp.accounting import (
    BudgetAccountant,
    BudgetError,
    PrivacyBudget,
    PrivacySpend,
    _accountant,
)


def test_budget_error_is_a_value_error():
    assert issubclass(BudgetError, ValueError)
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError):
        acc.spend(2.0)


def test_ceiling_and_repr():
    acc = BudgetAccountant(epsilon=2.5, delta=1e-5)
    assert (acc.epsilon, acc.delta) == (2.5, 1e-5)
    assert repr(acc) == "BudgetAccountant(epsilon=2.5, delta=1e-05)"
    assert repr(BudgetAccountant()) == "BudgetAccountant(epsilon=inf, delta=1.0)"
    assert repr(BudgetAccountant(epsilon=3.0)) == "BudgetAccountant(epsilon=3.0, delta=0.0)"
    assert repr(BudgetAccountant(delta=1e-5)) == "BudgetAccountant(epsilon=inf, delta=1e-05)"


@pytest.mark.parametrize(
    "epsilon, delta, error",
    [
        (-1.0, 0.0, ValueError),
        (1.0, 2.0, ValueError),
        (math.nan, 0.0, ValueError),
        ("1", 0.0, TypeError),
        (1.0, True, TypeError),
    ],
)
def test_bad_ceiling_is_rejected(epsilon, delta, error):
    with pytest.raises(error):
        BudgetAccountant(epsilon, delta)


def test_spend_total_remaining():
    acc = BudgetAccountant(epsilon=3.0, delta=1e-5)
    assert acc.total() == PrivacyBudget(0.0)
    assert acc.remaining() == PrivacyBudget(3.0, 1e-5)
    assert acc.spend(1.0) is None
    acc.spend(0.5, 4e-6)
    assert acc.total() == PrivacyBudget(1.5, 4e-6)
    assert acc.remaining().epsilon == 1.5
    assert acc.remaining().delta == pytest.approx(6e-6, rel=1e-12)
    assert [s.budget for s in acc.spends] == [PrivacyBudget(1.0), PrivacyBudget(0.5, 4e-6)]
    assert all(s.mechanism == "user" and s.composition == "leaf" for s in acc.spends)


def test_unlimited_accountant_records_everything_epsilon():
    acc = BudgetAccountant()
    for _ in range(5):
        acc.spend(1e6)
    assert acc.total() == PrivacyBudget(5e6)
    assert acc.remaining() == PrivacyBudget(math.inf, 1.0)
    acc.spend(1.0, 1e-5)  # no ceiling: approximate-DP spends are recorded too
    # An epsilon ceiling alone keeps delta at 0, and the error names what admits it.
    pure = BudgetAccountant(epsilon=10.0)
    with pytest.raises(BudgetError, match=r"created with delta=1e-09 \(or with no ceiling"):
        pure.spend(1.0, 1e-9)
    with pytest.raises(BudgetError, match=r"created with epsilon=11.0 \(or"):
        pure.spend(11.0)
    unlimited = BudgetAccountant(math.inf, 1.0)
    unlimited.spend(10.0, 0.5)
    unlimited.spend(10.0, 0.7)
    assert unlimited.total() == PrivacyBudget(20.0, 1.0)


def test_exceeding_epsilon_raises_and_records_nothing():
    acc = BudgetAccountant(epsilon=2.0)
    acc.spend(1.5)
    with pytest.raises(BudgetError, match="would exceed"):
        acc.spend(0.6)
    assert len(acc.spends) == 1
    assert acc.total() == PrivacyBudget(1.5)
    acc.spend(0.5)  # the refusal did not use up anything
    assert acc.remaining() == PrivacyBudget(0.0)
    with pytest.raises(BudgetError):
        acc.spend(1e-9)
    assert acc.total() == PrivacyBudget(2.0)


def test_exceeding_delta_raises_and_records_nothing():
    acc = BudgetAccountant(epsilon=10.0, delta=1e-5)
    acc.spend(1.0, 8e-6)
    with pytest.raises(BudgetError, match="delta"):
        acc.spend(1.0, 3e-6)
    assert acc.total() == PrivacyBudget(1.0, 8e-6)
    acc.spend(1.0, 2e-6)
    assert len(acc.spends) == 2
    with pytest.raises(BudgetError):
        BudgetAccountant(epsilon=10.0).spend(0.1, 1e-12)  # pure-DP ceiling


def test_invalid_spend_raises_and_records_nothing():
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        acc.spend(-0.5)
    with pytest.raises(ValueError, match="epsilon"):
        acc.spend(math.nan)
    with pytest.raises(TypeError):
        acc.spend("0.5")
    assert acc.spends == []
    with pytest.raises(BudgetError):
        acc.spend(math.inf)


def test_exact_fill_up_to_the_ceiling():
    acc = BudgetAccountant(epsilon=1.0)
    for _ in range(10):
        acc.spend(0.1)
    assert acc.total() == PrivacyBudget(1.0)
    assert acc.remaining() == PrivacyBudget(0.0)
    with pytest.raises(BudgetError):
        acc.spend(0.1)
    assert len(acc.spends) == 10

    for parts, ceiling in [([0.1, 0.2], 0.3), ([1 / 3] * 3, 1.0), ([0.7, 0.2, 0.1], 1.0)]:
        acc = BudgetAccountant(epsilon=ceiling, delta=1e-5)
        for p in parts:
            acc.spend(p, 1e-5 / len(parts))
        assert len(acc.spends) == len(parts)

    # Filling by whatever remains is always allowed.
    acc = BudgetAccountant(epsilon=1.0)
    acc.spend(0.3)
    acc.spend(acc.remaining().epsilon)
    assert acc.remaining().epsilon == 0.0


def test_rounding_tolerance_is_not_a_real_overspend():
    acc = BudgetAccountant(epsilon=1.0)
    acc.spend(0.5)
    with pytest.raises(BudgetError):
        acc.spend(0.5 + 1e-9)
    # Many tiny spends cannot creep past the ceiling: the check is on the running total.
    acc = BudgetAccountant(epsilon=1.0)
    acc.spend(1.0)
    refused = 0
    for _ in range(100):
        try:
            acc.spend(1e-13)
        except BudgetError:
            refused += 1
    assert acc.total().epsilon <= 1.0 + 1e-12
    assert refused >= 90


def test_check_does_not_record():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    assert acc.check(1.0, 1e-6) is None
    acc.check(0.5)
    assert acc.spends == [] and acc.total() == PrivacyBudget(0.0)
    with pytest.raises(BudgetError):
        acc.check(1.5)
    with pytest.raises(BudgetError):
        acc.check(0.5, 2e-6)
    acc.spend(0.75)
    with pytest.raises(BudgetError):
        acc.check(0.5)
    acc.check(0.25)
    assert len(acc.spends) == 1


def test_accepts_privacy_spend_records():
    stages = [PrivacySpend.leaf("RRWithPrior", 1.0, stage=t) for t in range(3)]
    fit = PrivacySpend.compose("LP-MST", stages, "parallel")
    acc = BudgetAccountant(epsilon=2.5, delta=1e-6)
    acc.spend(fit)
    assert acc.spends == [fit] and acc.spends[0] is fit
    acc.spend(PrivacySpend.leaf("Gaussian", 1.0, 1e-6))
    assert acc.total() == PrivacyBudget(2.0, 1e-6)
    seq = PrivacySpend.compose("two", stages[:2], "sequential")
    acc.check(PrivacySpend.leaf("RR", 0.5))
    with pytest.raises(BudgetError):
        acc.check(seq)
    with pytest.raises(BudgetError):
        acc.spend(seq)
    assert len(acc.spends) == 2


def _slow_compose(monkeypatch):
    # Widen the window between reading the ledger and appending to it, so that an
    # unsynchronised check-and-spend would be caught overspending.
    original = _accountant.compose_sequential

    def slow(budgets):
        budgets = list(budgets)
        time.sleep(1e-4)
        return original(budgets)

    monkeypatch.setattr(_accountant, "compose_sequential", slow)


def test_check_and_spend_is_atomic_under_threads(monkeypatch):
    _slow_compose(monkeypatch)
    acc = BudgetAccountant(epsilon=1.0)
    n_threads = 16
    barrier = threading.Barrier(n_threads)
    successes = [0] * n_threads
    errors = []

    def worker(i):
        barrier.wait()
        for _ in range(5):
            try:
                acc.spend(0.1)
                successes[i] += 1
            except BudgetError:
                pass
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    assert sum(successes) == 10
    assert len(acc.spends) == 10
    assert acc.total() == PrivacyBudget(1.0)


def test_copies_and_pickles_share_the_ledger_in_process():
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    acc.spend(PrivacySpend.leaf("RR", 0.5, stage=0))
    acc.spend(0.25, 1e-6)
    assert copy.copy(acc) is acc and copy.deepcopy(acc) is acc
    assert copy.deepcopy({"a": [acc]})["a"][0] is acc
    other = pickle.loads(pickle.dumps(acc))
    assert repr(other) == repr(acc) and other.path is None
    assert other.spends == acc.spends
    assert other.total() == acc.total() == PrivacyBudget(0.75, 1e-6)
    # The unpickled handle records on the same ledger, under the same lock.
    other.spend(1.0)
    assert acc.total().epsilon == 1.75 and len(acc.spends) == 3
    with pytest.raises(BudgetError):
        acc.spend(0.5)
    with pytest.raises(BudgetError):
        other.spend(0.5)
    acc.spend(0.25)
    assert other.remaining().epsilon == 0.0


def test_pickle_of_a_discarded_in_memory_ledger_refuses():
    acc = BudgetAccountant(epsilon=2.0)
    acc.spend(1.0)
    data = pickle.dumps(acc)
    del acc
    import gc

    gc.collect()
    orphan = pickle.loads(data)
    assert repr(orphan) == "BudgetAccountant(epsilon=2.0, delta=0.0)"
    for call in (orphan.total, orphan.remaining, lambda: orphan.spends, lambda: orphan.spend(0.1)):
        with pytest.raises(RuntimeError, match=r"path='ledger\.sqlite'.*client=client"):
            call()


def _spend_there(accountant):
    try:
        accountant.spend(0.1)
    except RuntimeError as exc:
        return str(exc)
    return None


def test_in_memory_ledger_copied_into_another_process_names_both_shared_ledgers():
    # A copy in a worker process (joblib, multiprocessing, or a Dask worker: all pickle
    # it) must say how to share a budget there: an SQLite file for the processes of one
    # machine, or a ledger in a Dask scheduler for a cluster. Up to fcde750 the text
    # named path= only.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    acc = BudgetAccountant(epsilon=1.0)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        message = pool.submit(_spend_there, acc).result()
    assert message is not None
    assert "copied (pickled) into process" in message
    assert "BudgetAccountant(epsilon, delta, path='ledger.sqlite')" in message
    assert "BudgetAccountant(epsilon, delta, client=client)" in message
    assert acc.spends == []


def test_total_zcdp():
    acc = BudgetAccountant(math.inf, 1.0)
    assert acc.total_zcdp() == 0.0
    assert acc.total_zcdp_approx_dp(1e-6) == PrivacyBudget(0.0, 1e-6)
    acc.spend(1.0)  # pure: rho = 1/2
    acc.spend(PrivacySpend.leaf("Gaussian", 4.0, 1e-6, rho=0.25))
    stages = [PrivacySpend.leaf("RR", 2.0), PrivacySpend.leaf("RR", 1.0)]
    acc.spend(PrivacySpend.compose("LP-MST", stages, "parallel"))  # max: rho = 2
    assert acc.total() == PrivacyBudget(7.0, 1e-6)
    assert acc.total_zcdp() == pytest.approx(2.75, rel=1e-15)
    converted = acc.total_zcdp_approx_dp(1e-6, method="classic")
    assert converted.delta == 1e-6
    assert converted.epsilon == pytest.approx(2.75 + 2 * math.sqrt(2.75 * math.log(1e6)))
    assert acc.total_zcdp_approx_dp(1e-6).epsilon <= converted.epsilon
    # An approximate-DP spend without rho has no zCDP guarantee.
    acc.spend(0.1, 1e-7)
    assert acc.total_zcdp() is None and acc.total_zcdp_approx_dp(1e-6) is None
    assert acc.total() == PrivacyBudget(7.1, 1e-6 + 1e-7)


def test_spend_rho_of_records():
    assert PrivacySpend.leaf("RR", 2.0).rho == 2.0
    assert PrivacySpend.leaf("RR", 2.0, rho=1.5).rho == 1.5
    assert PrivacySpend.leaf("G", 2.0, 1e-5, rho=0.3).rho == 0.3
    assert PrivacySpend.leaf("X", 2.0, 1e-5).rho is None
    seq = PrivacySpend.compose("s", [PrivacySpend.leaf("a", 1.0), PrivacySpend.leaf("b", 2.0)],
                               "sequential")
    assert seq.rho == 2.5
    par = PrivacySpend.compose("p", [seq, PrivacySpend.leaf("G", 1.0, 1e-6, rho=3.0)],
                               "parallel")
    assert par.rho == 3.0
    no_rho = PrivacySpend.leaf("X", 1.0, 1e-6)
    assert PrivacySpend.compose("p", [seq, no_rho], "parallel").rho is None
    with pytest.raises(ValueError, match="rho"):
        PrivacySpend.leaf("G", 1.0, 1e-6, rho=-1.0)
    with pytest.raises(TypeError, match="rho"):
        PrivacySpend.leaf("G", 1.0, 1e-6, rho="0.1")


def test_delta_beside_a_record_is_refused():
    from sklearn_labeldp.accounting import PrivacySpend

    acc = BudgetAccountant(epsilon=5.0, delta=1e-3)
    with pytest.raises(ValueError, match="inside the PrivacySpend"):
        acc.spend(PrivacySpend.leaf("x", 1.0), 1e-5)
    assert acc.spends == []


def test_a_plain_accountant_records_approximate_dp_estimators():
    # The README's BudgetAccountant() records PATE's and DP least squares' (eps, delta).
    from sklearn.datasets import make_classification

    from sklearn_labeldp import DPLeastSquaresClassifier, PATEClassifier

    X, y = make_classification(300, 5, random_state=0)
    acc = BudgetAccountant()
    acc.spend(1.0, 1e-5)
    PATEClassifier(epsilon=1.0, delta=1e-5, classes=[0, 1], accountant=acc).fit(X, y)
    DPLeastSquaresClassifier(epsilon=1.0, delta=1e-5, classes=[0, 1], accountant=acc).fit(X, y)
    assert len(acc.spends) == 3
    assert acc.total().delta == pytest.approx(3e-5)
