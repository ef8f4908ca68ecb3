"""Fits given no accountant are recorded by the process-wide default accountant."""

import os

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
