"""Instruments for tests/test_work_independence.py: traced bases, and a tape of the releases.

- :class:`TracedClassifier` and :class:`TracedRegressor` wrap a scikit-learn
  estimator and append one line per call (``fit``, ``fit_semi``, ``predict``,
  ``predict_proba``, ``decision_function``) to a log file whose path is one of
  their parameters, so that clones, pickles and joblib's loky workers write to
  the same file (each line one ``O_APPEND`` write). A line holds the call,
  the shape of ``X`` and a digest of ``X`` (public data: the digest says which
  rows a call saw) and, for a fit on label codes, how many targets are ``-1``
  (unlabeled rows are public); never a label.
- :func:`traced_mlp` is the same for a torch module: one line per forward pass.
- :class:`ReleaseTape` replaces :meth:`PrivateLabels.release`: it writes a line
  when a release starts and ends, records what every release returns
  (``"record"``), or runs the release (so the work inside it is traced) and
  returns the recorded value instead of its own (``"replay"``). Everything
  after a release then sees the same DP output in both worlds.
- :func:`observe` fits once and returns what the fit did (:class:`World`).
"""

import copy
import dataclasses
import functools
import hashlib
import logging
import os
import re
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import available_if

from sklearn_labeldp._private_labels import PrivateLabels
from sklearn_labeldp._target_adapters import learns_semi_supervised

__all__ = [
    "ReleaseTape",
    "TracedClassifier",
    "TracedRegressor",
    "World",
    "observe",
    "read_trace",
    "shown",
    "traced_mlp",
    "write_line",
]


def write_line(log, line):
    """Append ``line`` to the file ``log`` in one ``O_APPEND`` write (safe across processes)."""
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def read_trace(log):
    """The lines of ``log``, which is then emptied for the next world."""
    if not os.path.exists(log):
        return []
    with open(log) as file:
        lines = file.read().splitlines()
    os.truncate(log, 0)
    return lines


def _digest(X):
    """A short digest of the public ``X``: which rows (and in which order) a call saw."""
    array = np.ascontiguousarray(np.asarray(X))
    payload = array.tobytes() if array.dtype != object else repr(array.tolist()).encode()
    return hashlib.blake2b(payload, digest_size=6).hexdigest()


def _describe(X):
    return f"X={tuple(np.shape(X))} rows={_digest(X)}"


def _unlabeled(y):
    """How many label codes are ``-1`` (public: the unlabeled rows), for 1-d integer targets."""
    y = np.asarray(y)
    if y.ndim != 1 or y.dtype.kind not in "iu":
        return ""
    return f" unlabeled={int(np.sum(y == -1))}"


def _inner_has(name):
    return lambda self: hasattr(self.estimator, name)


class _Traced(BaseEstimator):
    """Delegates to a clone of ``estimator`` and logs every call to the file ``log``.

    Parameters
    ----------
    estimator : estimator
        The traced base.
    log : str
        Path of the trace file.
    tag : str
        Written at the start of each line (e.g. "teacher", "student").
    """

    def __init__(self, estimator=None, log=None, tag="base"):
        self.estimator = estimator
        self.log = log
        self.tag = tag

    def _write(self, call, X, extra=""):
        write_line(self.log, f"{self.tag} {call} {_describe(X)}{extra}")

    # ``sample_weight`` is named so that has_fit_parameter() sees it (ALIBI's soft
    # labels need it); the traced bases used here all accept it.
    def fit(self, X, y, sample_weight=None, **fit_params):
        """Log, then fit a clone of ``estimator``."""
        self._write("fit", X, _unlabeled(y) if isinstance(self, ClassifierMixin) else "")
        if sample_weight is not None:
            fit_params["sample_weight"] = sample_weight
        self.estimator_ = clone(self.estimator).fit(X, y, **fit_params)
        return self

    # Offered only for a semi-supervised inner estimator: the library then sees the
    # wrapper as one (learns_semi_supervised) and sends it -1 for the unlabeled rows.
    @available_if(lambda self: learns_semi_supervised(self.estimator))
    def fit_semi(self, X, y, **fit_params):
        """Log, then fit a clone of the semi-supervised ``estimator`` on codes with -1."""
        self._write("fit_semi", X, _unlabeled(y))
        self.estimator_ = clone(self.estimator).fit(X, y, **fit_params)
        return self

    @available_if(_inner_has("predict"))
    def predict(self, X):
        """Log, then predict."""
        self._write("predict", X)
        return self.estimator_.predict(X)

    @available_if(_inner_has("predict_proba"))
    def predict_proba(self, X):
        """Log, then predict probabilities."""
        self._write("predict_proba", X)
        return self.estimator_.predict_proba(X)

    @available_if(_inner_has("decision_function"))
    def decision_function(self, X):
        """Log, then score."""
        self._write("decision_function", X)
        return self.estimator_.decision_function(X)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "estimator_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.input_tags = inner.input_tags
        tags.target_tags = inner.target_tags
        return tags


class TracedClassifier(ClassifierMixin, _Traced):
    """A traced classifier (see :class:`_Traced`)."""

    @property
    def classes_(self):
        return self.estimator_.classes_


class TracedRegressor(RegressorMixin, _Traced):
    """A traced regressor (see :class:`_Traced`)."""


@functools.cache
def _traced_mlp_class():
    import torch

    class TracedMLP(torch.nn.Module):
        """One linear layer that logs each forward pass's batch shape to ``log``."""

        def __init__(self, n_outputs=2, n_features=4, log=None):
            super().__init__()
            self.log = log
            self.linear = torch.nn.Linear(n_features, n_outputs)

        def forward(self, X):
            write_line(self.log, f"module forward X={tuple(X.shape)}")
            return self.linear(X)

    # Picklable as _instrument.TracedMLP (skorch pickles its net to copy it), found
    # through the module's __getattr__ in any process, torch imported on demand.
    TracedMLP.__module__, TracedMLP.__qualname__ = __name__, "TracedMLP"
    return TracedMLP


def __getattr__(name):
    if name == "TracedMLP":
        return _traced_mlp_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def traced_mlp():
    """The class of a torch module that logs its forward passes (torch imported on demand)."""
    return _traced_mlp_class()


class ReplayMismatch(AssertionError):
    """The replaying world made a release that the recording world did not make."""


class ReleaseTape:
    """Record the output of every :meth:`PrivateLabels.release`, then replay it.

    Installed with pytest's ``monkeypatch`` (:meth:`install`). Releases are
    numbered in the order they start (a nested release, e.g. a search
    candidate's inside the search's own, gets the next number). In
    ``"record"`` mode each output is kept (a deep copy); in ``"replay"`` mode
    the release still runs, so the work inside the mechanism happens and is
    traced, but it returns a deep copy of the recorded output of the same
    number instead of its own.

    Parameters
    ----------
    log : str
        The trace file: each release writes a line when it starts and when it ends.
    """

    def __init__(self, log):
        self.log = log
        self.mode = "record"
        self.tape = {}
        self.count = 0

    def install(self, monkeypatch):
        original = PrivateLabels.release
        tape = self

        def release(labels, mechanism, indices, **kwargs):
            return tape._release(original, labels, mechanism, indices, **kwargs)

        monkeypatch.setattr(PrivateLabels, "release", release)
        return self

    def start(self, mode):
        """Begin a world: ``"record"`` clears the tape, ``"replay"`` replays it."""
        if mode not in ("record", "replay"):
            raise ValueError(mode)
        if mode == "record":
            self.tape = {}
        self.mode, self.count = mode, 0

    def _release(self, original, labels, mechanism, indices, **kwargs):
        number = self.count
        self.count += 1
        name = getattr(mechanism, "__name__", type(mechanism).__name__)
        write_line(self.log, f"release {number} {name} n={np.size(indices)} start")
        try:
            output = original(labels, mechanism, indices, **kwargs)
        except Exception as exc:
            write_line(self.log, f"release {number} raised {type(exc).__name__}")
            if self.mode == "record":
                self.tape[number] = exc
            raise
        write_line(self.log, f"release {number} end")
        if self.mode == "record":
            self.tape[number] = copy.deepcopy(output)
            return output
        if number not in self.tape:
            raise ReplayMismatch(f"release {number} ({name}) was not made in the recorded world")
        recorded = self.tape[number]
        if isinstance(recorded, Exception):
            raise type(recorded)(*recorded.args)
        return copy.deepcopy(recorded)


# tqdm's "[elapsed<remaining, rate]" and the rate alone: timing, not work.
_TIMING = re.compile(r"\[\d[^\[\]]*\]|\d+(\.\d+)?(it|s)/(s|it)")


def shown(text):
    """What a terminal shows of ``text`` once the fit ended, timings masked.

    Each line is its last carriage-return segment (a progress bar's final
    state; how often a bar redraws itself depends on time, not on work).
    """
    return [_TIMING.sub("<t>", line.split("\r")[-1].rstrip()) for line in text.split("\n")]


@dataclasses.dataclass
class World:
    """What one fit did: its trace and what it emitted, and how it ended."""

    trace: list
    stdout: list
    stderr: list
    warnings: list
    logs: list
    outcome: str
    model: object = None


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(f"{record.name} {record.levelname} {record.getMessage()}")


def observe(estimator, X, y, capfd, log):
    """Fit ``estimator`` and return the :class:`World` it made (the trace file is emptied)."""
    logger = logging.getLogger("sklearn_labeldp")
    handler, level = _Records(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    capfd.readouterr()
    model, outcome = None, "fitted"
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                model = estimator.fit(X, y)
            except Exception as exc:  # noqa: BLE001 - the outcome is compared
                outcome = f"raised {type(exc).__name__}"
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    out, err = capfd.readouterr()
    return World(
        trace=read_trace(log),
        stdout=shown(out),
        stderr=shown(err),
        warnings=[f"{w.category.__name__}: {w.message}" for w in caught],
        logs=handler.messages,
        outcome=outcome,
        model=model,
    )
