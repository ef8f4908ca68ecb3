"""The seal around every computation that reads true labels.

A label-DP fit releases the output of its mechanism and nothing else. Code
that reads true labels (a mechanism, teachers fitted on a part of the data,
DP-SGD training, an ERM solver, a search's selection) can leak through other
channels too: a warning whose occurrence or text depends on a label (a
teacher's ``ConvergenceWarning``), text printed by a base estimator
(``verbose=True``) or by a C extension straight to file descriptor 1 or 2, a
log record, or an exception message holding a number computed from the
labels. :func:`sealed` closes all of them for the duration of the
computation:

- warnings are caught and dropped;
- ``sys.stdout``/``sys.stderr`` and the file descriptors 1 and 2 point to
  ``os.devnull`` (C-level buffers are flushed before they are restored);
- logging is disabled;
- an exception becomes the one fixed exception the release site declares,
  raised outside the ``except`` clause so that it chains nothing.

The one channel left open is the library's progress bar
(:func:`public_stderr`), which shows counts and elapsed time only.

Work sent to other processes (joblib's loky workers, Dask workers) is sealed
there by :class:`SealedCall`, since those processes have file descriptors,
warning filters and loggers of their own.

The seal is process-wide while any thread is inside it (file descriptors and
warning filters are process state): output of other threads is silenced
meanwhile, never let through. A worker process started inside a seal (e.g. the
first ``Parallel(n_jobs=2)`` of a session, inside a release) inherits
``os.devnull`` as its stdout and stderr for as long as joblib keeps it.
"""

import ctypes
import ctypes.util
import functools
import logging
import os
import sys
import threading
import warnings
from contextlib import contextmanager

from ..exceptions import ReleaseError

__all__ = ["SealedCall", "public_stderr", "sealed"]

_LOCK = threading.RLock()
_STATE = {"depth": 0}


@functools.cache
def _libc():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c"))
    except (OSError, TypeError):  # no C library to flush (e.g. some platforms)
        return None


def _flush_c_stdio():
    """Flush the C library's stdio buffers, written by C extensions with ``printf``."""
    libc = _libc()
    if libc is not None:
        libc.fflush(None)


def _flush_python_streams():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass


def _enter():
    state = {"stdout": sys.stdout, "stderr": sys.stderr, "saved_fds": {}}
    _flush_python_streams()
    _flush_c_stdio()
    devnull = open(os.devnull, "w")  # noqa: SIM115 - closed by _exit
    state["devnull"] = devnull
    for fd in (1, 2):
        try:
            state["saved_fds"][fd] = os.dup(fd)
            os.dup2(devnull.fileno(), fd)
        except OSError:  # a closed descriptor has nothing to seal
            pass
    saved_stderr = state["saved_fds"].get(2)
    state["public"] = (
        os.fdopen(os.dup(saved_stderr), "w", buffering=1)
        if saved_stderr is not None
        else state["stderr"]
    )
    state["logging"] = logging.root.manager.disable
    # Process-wide until the last seal in any thread is left; every level also
    # sets its own filter (see _sealed_channels).
    state["warnings"] = warnings.catch_warnings()
    state["warnings"].__enter__()
    warnings.simplefilter("ignore")
    _close_process_channels(devnull)
    return state


def _close_process_channels(devnull):
    """Point Python's streams at ``devnull`` and disable logging (again, when nested:
    code between two seals may have reopened them)."""
    sys.stdout = sys.stderr = devnull
    logging.disable(logging.CRITICAL)


def _exit(state):
    logging.disable(state["logging"])
    state["warnings"].__exit__(None, None, None)
    _flush_python_streams()
    _flush_c_stdio()
    sys.stdout, sys.stderr = state["stdout"], state["stderr"]
    for fd, saved in state["saved_fds"].items():
        os.dup2(saved, fd)
        os.close(saved)
    if state["public"] is not state["stderr"]:
        state["public"].close()
    state["devnull"].close()


@contextmanager
def _sealed_channels():
    """Seal the process's channels; only the outermost seal restores them.

    File descriptors, Python's streams and logging are process state: they are
    restored when the last seal, in any thread, is left. Warning filters are
    set at every level, nested ones included, since code between two seals (a
    search recording its candidates' public warnings) may have reset them.
    """
    with _LOCK:
        if _STATE["depth"] == 0:
            _STATE["outer"] = _enter()
        else:
            _close_process_channels(_STATE["outer"]["devnull"])
        _STATE["depth"] += 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        with _LOCK:
            _STATE["depth"] -= 1
            if _STATE["depth"] == 0:
                _exit(_STATE.pop("outer"))


def public_stderr():
    """The stream the progress bar writes to: the real stderr, even inside a seal.

    Returns
    -------
    file object
    """
    with _LOCK:
        if _STATE["depth"]:
            return _STATE["outer"]["public"]
    return sys.stderr


def sealed(func, *args, failure=None, **kwargs):
    """Call ``func(*args, **kwargs)`` with every channel but its return value closed.

    Parameters
    ----------
    func : callable
        The computation on true labels.
    *args, **kwargs
        Its arguments.
    failure : str, default=None
        The fixed message of the :class:`~sklearn_labeldp.exceptions.ReleaseError`
        raised when ``func`` raises; ``None`` names ``func``. It must not depend
        on the labels: the failure's own message and type are dropped.

    Returns
    -------
    object
        What ``func`` returned.

    Raises
    ------
    ReleaseError
        When ``func`` raised any ``Exception``.
    """
    failed = False
    with _sealed_channels():
        try:
            result = func(*args, **kwargs)
        except Exception:  # noqa: BLE001 - its type and text may depend on the labels
            failed = True
    if failed:  # raised here, outside the except clause, so that nothing is chained
        name = getattr(func, "__qualname__", type(func).__name__)
        raise ReleaseError(
            failure
            or f"a computation on the private labels ({name}) failed; its details are "
            "withheld because they may depend on the labels, and the budget it was "
            "charged stays spent."
        )
    return result


class SealedCall:
    """A picklable ``func`` that runs sealed wherever it is called (e.g. in a worker).

    Parameters
    ----------
    func : callable
        A picklable function.
    failure : str, default=None
        See :func:`sealed`.
    """

    def __init__(self, func, failure=None):
        self.func = func
        self.failure = failure

    def __call__(self, *args, **kwargs):
        return sealed(self.func, *args, failure=self.failure, **kwargs)
