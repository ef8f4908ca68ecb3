"""A budget ledger held by a Dask scheduler, shared by the client and every worker.

An SQLite ledger is shared by the processes of one machine; a Dask cluster
spans machines. This ledger keeps its records in the scheduler, in a
:class:`distributed.Variable`, and makes check-and-append atomic with a
:class:`distributed.Lock`, both named after the ledger. A handle pickled into a
task carries only those names and the scheduler's address: a worker never
holds the records, it asks the scheduler, through its own client, under the
lock. A spend, once the scheduler has it, survives the worker that made it.

The variable holds the list of the records' pickles, each pickled once: a
process unpickles only the records it has not read before (it keeps those it
has, by ledger; a ledger only grows), and an append adds one pickle.
"""

import collections
import pickle
import threading
import uuid

__all__ = []

_PREFIX = "sklearn-labeldp-ledger-"

# The records this process has unpickled, by ledger name, the most recently used last.
_DECODED = collections.OrderedDict()
_DECODED_LOCK = threading.Lock()
_DECODED_LEDGERS = 32


def _distributed():
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(
            "a ledger on a Dask cluster needs distributed: pip install 'sklearn-labeldp[dask]'."
        ) from exc
    return distributed


class _DaskLedger:
    """Records in a Dask scheduler, reached by the client and by every worker."""

    def __init__(self, name, address, timeout):
        self.name = name
        self.address = address
        self.timeout = timeout

    @classmethod
    def create(cls, client, timeout):
        distributed = _distributed()
        if not isinstance(client, distributed.Client):
            raise TypeError(
                f"client must be a distributed.Client; got {type(client).__name__}."
            )
        ledger = cls(_PREFIX + uuid.uuid4().hex, client.scheduler.address, timeout)
        distributed.Variable(ledger.name, client=client).set(pickle.dumps([]))
        return ledger

    def __reduce__(self):
        return type(self), (self.name, self.address, self.timeout)

    def _client(self):
        """This process's client of the ledger's scheduler (a worker's own, on a worker)."""
        distributed = _distributed()
        try:
            client = distributed.get_client()
        except ValueError as exc:
            raise RuntimeError(
                f"this BudgetAccountant's ledger lives in the Dask scheduler at {self.address}, "
                "and this process has no client of it: create a distributed.Client(address) "
                "first."
            ) from exc
        if client.scheduler.address != self.address:
            raise RuntimeError(
                f"this BudgetAccountant's ledger lives in the Dask scheduler at {self.address}, "
                f"but this process's client talks to {client.scheduler.address}."
            )
        return client

    def _variable(self, client):
        return _distributed().Variable(self.name, client=client)

    def _load(self, client):
        try:
            blob = self._variable(client).get(timeout=self.timeout)
        except TimeoutError as exc:
            raise RuntimeError(
                f"the budget ledger {self.name} was not found in the scheduler at "
                f"{self.address} (was the cluster restarted?)."
            ) from exc
        return pickle.loads(blob)

    def _decode(self, pickles):
        """The records of ``pickles`` (the ledger's), unpickling only those not read before."""
        with _DECODED_LOCK:
            known = _DECODED.get(self.name, ())
        records = (*known, *(pickle.loads(blob) for blob in pickles[len(known):]))
        with _DECODED_LOCK:
            if len(_DECODED.get(self.name, ())) <= len(records):
                _DECODED[self.name] = records
            _DECODED.move_to_end(self.name)
            while len(_DECODED) > _DECODED_LEDGERS:
                _DECODED.popitem(last=False)
        return list(records)

    def records(self):
        return self._decode(self._load(self._client()))

    def rows(self):
        return [(s.epsilon, s.delta, s.rho) for s in self.records()]

    def append_if(self, spend, check):
        """Append ``spend`` if ``check(the records)`` does not raise; atomic."""
        client = self._client()
        lock = _distributed().Lock(self.name + "-lock")  # on the scheduler of get_client()
        if not lock.acquire(timeout=self.timeout):
            raise RuntimeError(
                f"recording a spend on the budget ledger {self.name} timed out after "
                f"{self.timeout} s waiting for its lock (nothing was recorded)."
            )
        try:
            pickles = self._load(client)
            check(self._decode(pickles))
            added = pickle.dumps(spend, protocol=pickle.HIGHEST_PROTOCOL)
            blob = pickle.dumps([*pickles, added], protocol=pickle.HIGHEST_PROTOCOL)
            self._variable(client).set(blob)
        finally:
            lock.release()
