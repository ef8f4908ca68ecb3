"""Fits given no accountant are recorded by the process-wide default accountant."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.neighbors import KNeighborsClassifier

from sklearn_labeldp import RRWithPriorClassifier
from sklearn_labeldp.accounting import DEFAULT_LEDGER_ENV, default_accountant
from sklearn_labeldp.datasets import make_circle_gaussians


@pytest.fixture(scope="module")
def data():
    return make_circle_gaussians(600, 3, sigma=0.3, random_state=0)


def _recorded(epsilon):
    """Spends of exactly ``epsilon``: each test uses its own value, so other tests
    sharing the default ledger cannot disturb the count."""
    return sum(1 for spend in default_accountant().spends if spend.epsilon == epsilon)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_grid_search_records_every_fit(data, n_jobs):
    X, y = data
    epsilon = 0.1 + 1e-6 * n_jobs
    clf = RRWithPriorClassifier(KNeighborsClassifier(), epsilon=epsilon, classes=[0, 1, 2])
    GridSearchCV(clf, {"estimator__n_neighbors": [3, 9, 27]}, cv=3, n_jobs=n_jobs).fit(X, y)
    assert _recorded(epsilon) == 3 * 3 + 1  # every candidate on every fold, and the refit


def test_cross_val_score_records_every_fold(data):
    X, y = data
    epsilon = 0.123457
    clf = RRWithPriorClassifier(KNeighborsClassifier(), epsilon=epsilon, classes=[0, 1, 2])
    before = default_accountant().total().epsilon
    cross_val_score(clf, X, y, cv=4)
    assert _recorded(epsilon) == 4
    assert default_accountant().total().epsilon >= before + 4 * epsilon - 1e-9


def test_the_default_has_no_ceiling_and_an_own_accountant_bypasses_it(data):
    from sklearn_labeldp.accounting import BudgetAccountant

    X, y = data
    own = BudgetAccountant()
    RRWithPriorClassifier(epsilon=0.777, classes=[0, 1, 2], accountant=own).fit(X, y)
    assert _recorded(0.777) == 0 and own.total().epsilon == 0.777
    assert default_accountant().epsilon == np.inf and default_accountant().delta == 1.0


def test_a_fresh_process_loses_no_spend_of_its_search_workers(tmp_path):
    # A new interpreter whose first use of the library is GridSearchCV(n_jobs=2): its
    # loky workers exist before anything in it asks for the default accountant. They
    # record on its ledger only because importing sklearn_labeldp put the ledger's
    # path in the environment they copy. With the path claimed on the first call of
    # default_accountant() instead, each worker would record on a ledger of its own
    # and the process would count the refit alone (1 spend, not 7).
    script = textwrap.dedent(
        """
        import os, sqlite3
        from sklearn.model_selection import GridSearchCV
        from sklearn.neighbors import KNeighborsClassifier
        from sklearn_labeldp import RRWithPriorClassifier
        from sklearn_labeldp.accounting import DEFAULT_LEDGER_ENV, default_accountant
        from sklearn_labeldp.datasets import make_circle_gaussians

        X, y = make_circle_gaussians(300, 3, sigma=0.3, random_state=0)
        clf = RRWithPriorClassifier(KNeighborsClassifier(), epsilon=0.25, classes=[0, 1, 2])
        GridSearchCV(clf, {"estimator__n_neighbors": [3, 9]}, cv=3, n_jobs=2).fit(X, y)
        with sqlite3.connect(os.environ[DEFAULT_LEDGER_ENV]) as conn:
            pids = [pid for (pid,) in conn.execute("SELECT pid FROM labeldp_spends")]
        others = len(set(pids) - {os.getpid()})
        print(len(pids), others, default_accountant().total().epsilon)
        """
    )
    env = {k: v for k, v in os.environ.items() if k != DEFAULT_LEDGER_ENV}
    env["TMPDIR"] = str(tmp_path)  # where the fresh process claims its ledger
    run = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    n_spends, n_worker_processes, total = run.stdout.split()
    assert int(n_spends) == 2 * 3 + 1  # every candidate on every fold, and the refit
    assert int(n_worker_processes) >= 1  # the fold fits did run in other processes
    assert float(total) == 7 * 0.25
    assert list(tmp_path.glob("sklearn-labeldp-ledger-*")) == []  # removed at exit


def test_worker_processes_find_the_ledger_through_the_environment():
    path = os.environ[DEFAULT_LEDGER_ENV]
    assert default_accountant().path == os.path.abspath(path)


def test_pointing_the_variable_elsewhere_starts_a_fresh_ledger(tmp_path, monkeypatch, data):
    X, y = data
    monkeypatch.setenv(DEFAULT_LEDGER_ENV, str(tmp_path / "ledger.sqlite"))
    assert default_accountant().spends == []
    RRWithPriorClassifier(epsilon=0.5, classes=[0, 1, 2]).fit(X, y)
    assert default_accountant().total().epsilon == 0.5


def test_a_removed_variable_is_a_clear_error(monkeypatch):
    monkeypatch.delenv(DEFAULT_LEDGER_ENV)
    with pytest.raises(RuntimeError, match=DEFAULT_LEDGER_ENV):
        default_accountant()
