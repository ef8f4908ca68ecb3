"""Where a BudgetAccountant's spends live: this process's memory or an SQLite file.

A ledger stores :class:`PrivacySpend` records and appends one only after a
check of the records already there (the records themselves, since a tight
composition needs each spend's description, not only its budget), atomically.
The accountant is a handle on a ledger; copies of the handle share it.
"""

import collections
import math
import os
import pickle
import sqlite3
import threading
import time
import uuid
import weakref
from pathlib import Path

from ._budget import PrivacyBudget

__all__ = []

_FORMAT = "sklearn-labeldp budget ledger"
_VERSION = 1
_META = "labeldp_ledger_meta"
_SPENDS = "labeldp_spends"

# In-memory ledgers of this process, by token: unpickling a handle in the process
# that made it finds its ledger here.
_MEMORY_LEDGERS = weakref.WeakValueDictionary()

# The records this process has read from SQLite ledgers, by (path, ledger id): the
# last row id read and the records up to it, the most recently used ledger last.
_DECODED = collections.OrderedDict()
_DECODED_LOCK = threading.Lock()
_DECODED_LEDGERS = 32

# What to do when an in-memory ledger is out of reach: both ledgers that other
# processes can share, since the copy may be in a joblib or multiprocessing
# worker on this machine or in a Dask worker anywhere on a cluster.
_SHARE_LEDGER = (
    "Spends made there could never reach the original ledger, so this accountant "
    "refuses to record or report anything. To share a budget across processes, create "
    "the accountant with a ledger they can all reach: "
    "BudgetAccountant(epsilon, delta, path='ledger.sqlite') for processes on one machine "
    "(joblib n_jobs > 1, multiprocessing, a saved model loaded elsewhere), or "
    "BudgetAccountant(epsilon, delta, client=client) to keep it in a Dask scheduler "
    "(tasks on the workers of a Dask cluster, on any machine)."
)


class _MemoryLedger:
    """Records in this process's memory, guarded by a lock; usable only in this process."""

    def __init__(self):
        self.token = uuid.uuid4().hex
        self.pid = os.getpid()
        self._records = []
        self._lock = threading.Lock()
        _MEMORY_LEDGERS[self.token] = self

    def __reduce__(self):
        return _attach_memory_ledger, (self.token, self.pid)

    def _check_process(self):
        if os.getpid() != self.pid:
            raise RuntimeError(
                f"this BudgetAccountant keeps its ledger in the memory of process "
                f"{self.pid} and is being used in process {os.getpid()} (a forked "
                f"copy). {_SHARE_LEDGER}"
            )

    def records(self):
        self._check_process()
        with self._lock:
            return list(self._records)

    def rows(self):
        """``(epsilon, delta, rho)`` of every record, in order."""
        return [(s.epsilon, s.delta, s.rho) for s in self.records()]

    def append_if(self, spend, check):
        """Append ``spend`` if ``check(the records)`` does not raise."""
        self._check_process()
        with self._lock:
            check(list(self._records))
            self._records.append(spend)


def _attach_memory_ledger(token, pid):
    ledger = _MEMORY_LEDGERS.get(token)
    if os.getpid() == pid and ledger is not None:
        return ledger
    if os.getpid() != pid:
        reason = (
            f"this BudgetAccountant keeps its ledger in the memory of process {pid} "
            f"and was copied (pickled) into process {os.getpid()}."
        )
    else:
        reason = (
            "this BudgetAccountant was unpickled after the in-memory ledger it was "
            "pickled from had been discarded."
        )
    return _DetachedLedger(reason)


class _DetachedLedger:
    """The copy of an in-memory ledger in a place that cannot reach it: refuses everything."""

    def __init__(self, reason):
        self.reason = reason

    def _refuse(self, *args, **kwargs):
        raise RuntimeError(f"{self.reason} {_SHARE_LEDGER}")

    records = rows = append_if = _refuse


def _is_lock_error(exc):
    """Whether an SQLite error says another connection holds the database's lock."""
    return "locked" in str(exc) or "busy" in str(exc)


def _enter_wal_mode(conn, timeout):
    """Switch ``conn``'s database to WAL mode, waiting up to ``timeout`` s for other openers.

    Changing the journal mode takes an exclusive lock without SQLite's busy
    handler: when processes open a new ledger at once (the default ledger in
    the workers of ``joblib``'s ``n_jobs > 1``), all but one would fail at
    once with "database is locked". Retry instead, as the busy handler would.
    """
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        try:
            return conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except sqlite3.OperationalError as exc:
            if not _is_lock_error(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.05)


class _SQLiteLedger:
    """Records in an SQLite file (WAL mode), shared by every process that opens it.

    A connection is opened for each operation, so handles survive ``fork``,
    threads and pickling. A spend is one row, inserted by the transaction
    (``BEGIN IMMEDIATE``, so writers queue on the database lock) that read the
    rows it checks against: committed exactly once or not at all.
    """

    def __init__(self, path, timeout, ledger_id, ceiling):
        self.path = path
        self.timeout = timeout
        self.ledger_id = ledger_id
        self.ceiling = ceiling

    @classmethod
    def open_or_create(cls, path, ceiling, timeout, slack=None):
        path = os.path.abspath(os.fspath(path))
        try:
            conn = sqlite3.connect(path, timeout=timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise ValueError(f"cannot open or create the ledger file {path!r}: {exc}") from exc
        try:
            mode = _enter_wal_mode(conn, timeout)
            if str(mode).lower() != "wal":
                raise ValueError(
                    f"the ledger file {path!r} cannot use SQLite's WAL mode (got {mode!r}); "
                    "put it on a local file system."
                )
            conn.execute("BEGIN IMMEDIATE")
            try:
                ledger_id, ceiling = cls._initialise(conn, path, ceiling, slack)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as exc:
            if _is_lock_error(exc):
                raise RuntimeError(
                    f"the budget ledger {path!r} stayed locked by another process for "
                    f"{timeout} s: {exc}"
                ) from exc
            raise ValueError(f"{path!r} is not a usable budget ledger: {exc}") from exc
        except sqlite3.Error as exc:
            raise ValueError(f"{path!r} is not a usable budget ledger: {exc}") from exc
        finally:
            conn.close()
        return cls(path, timeout, ledger_id, ceiling)

    @staticmethod
    def _initialise(conn, path, ceiling, slack):
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
        if tables and _META not in tables:
            raise ValueError(
                f"{path!r} is an SQLite database but not a budget ledger; refusing to "
                "write into it."
            )
        conn.execute(f"CREATE TABLE IF NOT EXISTS {_META} (key TEXT PRIMARY KEY, value)")
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {_SPENDS} ("
            "id INTEGER PRIMARY KEY AUTOINCREMENT, epsilon REAL NOT NULL, "
            "delta REAL NOT NULL, rho REAL, mechanism TEXT NOT NULL, "
            "record BLOB NOT NULL, pid INTEGER NOT NULL, created REAL NOT NULL)"
        )
        meta = dict(conn.execute(f"SELECT key, value FROM {_META}"))
        if not meta:
            # A new ledger without a stated ceiling limits nothing.
            ceiling = PrivacyBudget(math.inf, 1.0) if ceiling is None else ceiling
            meta = {
                "format": _FORMAT,
                "version": _VERSION,
                "ledger_id": uuid.uuid4().hex,
                "epsilon": ceiling.epsilon,
                "delta": ceiling.delta,
                "slack": slack,
            }
            conn.executemany(f"INSERT INTO {_META} VALUES (?, ?)", meta.items())
            return meta["ledger_id"], ceiling
        if meta.get("format") != _FORMAT or meta.get("version") != _VERSION:
            raise ValueError(
                f"{path!r} is not a budget ledger of version {_VERSION}: {meta!r}."
            )
        stored = PrivacyBudget(meta["epsilon"], meta["delta"])
        if ceiling is not None and stored != ceiling:
            raise ValueError(
                f"the ledger {path!r} has the ceiling (epsilon={stored.epsilon}, "
                f"delta={stored.delta}); an accountant opening it must state the same "
                f"ceiling, got (epsilon={ceiling.epsilon}, delta={ceiling.delta})."
            )
        # A ledger created before the slack existed has none: its ceiling is on the sum.
        stored_slack = meta.get("slack")
        if stored_slack != slack:
            raise ValueError(
                f"the ledger {path!r} was created with slack={stored_slack} (the delta its "
                "ceiling check may spend on the tight composition); an accountant opening "
                f"it must state the same slack, got slack={slack}."
            )
        return meta["ledger_id"], stored

    def _connect(self):
        # mode=rw: a missing file is an error, never a fresh (empty) ledger.
        uri = Path(self.path).as_uri() + "?mode=rw"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=self.timeout, isolation_level=None)
            conn.execute("PRAGMA synchronous=FULL")
        except sqlite3.Error as exc:
            raise RuntimeError(
                f"cannot open the budget ledger {self.path!r}: {exc}. It must stay where "
                "it was created while any accountant uses it."
            ) from exc
        return conn

    def _verify(self, conn):
        row = conn.execute(f"SELECT value FROM {_META} WHERE key = 'ledger_id'").fetchone()
        if row is None or row[0] != self.ledger_id:
            raise RuntimeError(
                f"the file {self.path!r} is no longer the budget ledger this accountant "
                "was created on (it was replaced)."
            )

    def _read(self, read):
        conn = self._connect()
        try:
            conn.execute("BEGIN")
            try:
                self._verify(conn)
                return read(conn)
            finally:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise RuntimeError(f"reading the budget ledger {self.path!r} failed: {exc}") from exc
        finally:
            conn.close()

    def _records(self, conn):
        """Every record, in order: those this process has read before, then the new rows.

        Rows are only ever appended (ids increase), so the records read
        earlier by this process, kept by ledger, stay a prefix of the ledger:
        only the rows after the last one read are fetched and unpickled.
        """
        key = (self.path, self.ledger_id)
        with _DECODED_LOCK:
            last, records = _DECODED.get(key, (0, ()))
        rows = conn.execute(
            f"SELECT id, record FROM {_SPENDS} WHERE id > ? ORDER BY id", (last,)).fetchall()
        if rows:
            last, records = rows[-1][0], (*records, *(pickle.loads(blob) for _, blob in rows))
        with _DECODED_LOCK:
            if _DECODED.get(key, (0,))[0] <= last:
                _DECODED[key] = (last, records)
            _DECODED.move_to_end(key)
            while len(_DECODED) > _DECODED_LEDGERS:
                _DECODED.popitem(last=False)
        return list(records)

    def records(self):
        return self._read(self._records)

    def rows(self):
        return self._read(
            lambda conn: conn.execute(
                f"SELECT epsilon, delta, rho FROM {_SPENDS} ORDER BY id").fetchall())

    def append_if(self, spend, check):
        rho = spend.rho
        row = (
            spend.epsilon,
            spend.delta,
            None if rho is None else rho,
            spend.mechanism,
            pickle.dumps(spend, protocol=pickle.HIGHEST_PROTOCOL),
            os.getpid(),
            time.time(),
        )
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                self._verify(conn)
                # Read inside the write transaction: no other writer can append
                # between this check and the insert below.
                check(self._records(conn))
                conn.execute(
                    f"INSERT INTO {_SPENDS} (epsilon, delta, rho, mechanism, record, pid, "
                    "created) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise RuntimeError(
                f"recording a spend on the budget ledger {self.path!r} failed (nothing was "
                f"recorded): {exc}"
            ) from exc
        finally:
            conn.close()
