"""The process-wide default accountant: every fit given no accountant is recorded.

A plain :class:`~sklearn.model_selection.GridSearchCV` fits an estimator many
times; without an ``accountant`` nothing would say what the labels paid. So
each fit that has no accountant records its spend here, and
``default_accountant().total()`` answers "what did that search spend".

The ledger is an SQLite file in the temporary directory whose path is put in
the environment variable ``SKLEARN_LABELDP_DEFAULT_LEDGER`` when this module
is first imported. Worker processes started afterwards (joblib's loky
workers, ``multiprocessing`` children) inherit the variable and record on the
same file, so a search with ``n_jobs > 1`` loses no spend. The process that
created the file removes it when it exits.
"""

import atexit
import math
import os
import secrets
import tempfile
import threading

from ._accountant import BudgetAccountant

__all__ = ["DEFAULT_LEDGER_ENV", "default_accountant"]

DEFAULT_LEDGER_ENV = "SKLEARN_LABELDP_DEFAULT_LEDGER"

_lock = threading.Lock()
_accountants = {}  # path -> accountant, one handle per ledger file


def _remove_ledger(path):
    for suffix in ("", "-wal", "-shm"):
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            pass


def _claim_ledger_path():
    """Choose this process tree's ledger path, unless a parent process already did."""
    if os.environ.get(DEFAULT_LEDGER_ENV):
        return
    path = os.path.join(
        tempfile.gettempdir(),
        f"sklearn-labeldp-ledger-{os.getpid()}-{secrets.token_hex(8)}.sqlite",
    )
    os.environ[DEFAULT_LEDGER_ENV] = path
    atexit.register(_remove_ledger, path)


# Claimed here, when the package is imported, not on the first call of
# default_accountant(): a worker process (joblib's loky workers,
# multiprocessing children) copies the environment when it starts, so the path
# must be in os.environ before the first worker exists. Claimed lazily, a
# search whose process had not yet asked for the default accountant would
# start workers with no path; each would claim a ledger of its own, record
# there and remove it at exit, and a plain GridSearchCV(n_jobs=2) would lose
# every spend of its workers (tests/accounting/test_default_accountant.py).
_claim_ledger_path()


def default_accountant():
    """The accountant that records every fit given no ``accountant``.

    It has no ceiling (``epsilon=inf``, ``delta=1``): it records, it never
    refuses. Give an estimator its own
    :class:`~sklearn_labeldp.accounting.BudgetAccountant` to enforce a budget.
    Fits in worker processes started after :mod:`sklearn_labeldp` was imported
    record on the same ledger (see the module's notes).

    Returns
    -------
    BudgetAccountant
        A handle on the ledger named by the environment variable
        ``SKLEARN_LABELDP_DEFAULT_LEDGER`` (point it to another file, e.g. in
        a test, to start a fresh default ledger).

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn_labeldp import RRWithPriorClassifier
    >>> from sklearn_labeldp.accounting import default_accountant
    >>> from sklearn_labeldp.datasets import make_circle_gaussians
    >>> X, y = make_circle_gaussians(300, 3, sigma=0.3, random_state=0)
    >>> before = default_accountant().total().epsilon
    >>> clf = RRWithPriorClassifier(KNeighborsClassifier(), epsilon=0.5, classes=[0, 1, 2])
    >>> search = GridSearchCV(clf, {"estimator__n_neighbors": [5, 15]}, cv=3).fit(X, y)
    >>> spent = default_accountant().total().epsilon - before
    >>> round(spent, 9)   # (2 candidates x 3 folds + refit) x 0.5, up to the sum's rounding
    3.5
    """
    path = os.environ.get(DEFAULT_LEDGER_ENV)
    if not path:
        raise RuntimeError(
            f"the environment variable {DEFAULT_LEDGER_ENV} was removed: the default "
            "ledger cannot be found. Set it to a file path, or pass an accountant."
        )
    with _lock:
        accountant = _accountants.get(path)
        if accountant is None:
            accountant = BudgetAccountant(math.inf, 1.0, path=path)
            _accountants[path] = accountant
        return accountant
