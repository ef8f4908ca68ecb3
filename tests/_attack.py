"""An attacker's toolkit against released label-DP models (used by test_released_state.py).

The attacker holds only what a fit returns: the object, its ``get_params(deep=True)``,
its fitted attributes (nested estimators included) and its pickle. It knows the
features and, to make the attack as strong as possible, every true label. It
harvests everything that could be a seed or a generator from the object, re-runs
the fit with each one and compares the noisy outputs: an exact match means the
mechanism's coins were recovered, so its noise can be inverted.
"""

import copy
import dataclasses
import fnmatch
import pickle
import re
import types
import warnings

import numpy as np
from sklearn.base import BaseEstimator, clone

__all__ = [
    "NOISY_ATTRIBUTES",
    "diff_signatures",
    "find_forbidden",
    "harvest_candidates",
    "noisy_fingerprint",
    "path_str",
    "replay_attack",
    "signature",
    "walk",
]

# Released arrays that come straight from a mechanism's noise (or are an
# injective-enough function of it): two fits agree on them exactly only if
# they drew the same coins.
NOISY_ATTRIBUTES = (
    "privatized_labels_",
    "privatized_bits_",
    "soft_labels_",
    "cluster_prior_",
    "coef_",
    "answered_labels_",
    "answered_indices_",
)

_RNG_TYPES = (
    np.random.Generator,
    np.random.RandomState,
    np.random.BitGenerator,
    np.random.SeedSequence,
)
_LEAF_TYPES = (type(None), bool, int, float, complex, str, bytes, np.generic, *_RNG_TYPES)
_OPAQUE_TYPES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                 types.MethodType, type)


def _is_tensor(obj):
    return type(obj).__module__.startswith("torch") and type(obj).__name__ in {
        "Tensor", "Parameter", "device", "dtype", "Generator",
    }


def _children(obj):
    """The (key, value) pairs reachable from ``obj`` one step down."""
    if isinstance(obj, dict):
        return list(obj.items())
    if isinstance(obj, (list, tuple)):
        return list(enumerate(obj))
    if isinstance(obj, (set, frozenset)):
        return list(enumerate(sorted(obj, key=repr)))
    if isinstance(obj, np.ndarray):
        if obj.dtype == object and obj.size <= 10_000:
            return list(enumerate(np.asarray(obj).ravel().tolist()))
        return []
    children = []
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        children += [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    if hasattr(obj, "__dict__"):
        children += list(vars(obj).items())
    elif hasattr(obj, "__getstate__"):  # e.g. sklearn's Cython Tree
        try:
            state = obj.__getstate__()
        except Exception:  # noqa: BLE001 - an attacker ignores what it cannot read
            state = None
        if isinstance(state, dict):
            children += list(state.items())
    return children


def walk(obj, *, max_depth=14):
    """Yield ``(path, value)`` for ``obj`` and everything reachable from it (once each)."""
    seen = set()
    stack = [((), obj)]
    while stack:
        path, value = stack.pop()
        yield path, value
        if isinstance(value, _LEAF_TYPES) or isinstance(value, _OPAQUE_TYPES):
            continue
        if _is_tensor(value) or len(path) >= max_depth or id(value) in seen:
            continue
        seen.add(id(value))
        for key, child in reversed(_children(value)):
            stack.append(((*path, key), child))


def path_str(path):
    return ".".join(str(p) for p in path) or "<root>"


# --------------------------------------------------------------------------- seeds


class _Candidate:
    """A candidate seed: ``make()`` returns a fresh random_state for one replay."""

    def __init__(self, label, make):
        self.label, self.make = label, make

    def __repr__(self):
        return self.label


def _int_candidates(value):
    if isinstance(value, (bool, np.bool_)):
        return []
    if isinstance(value, (int, np.integer)):
        return [int(value)]
    if isinstance(value, (float, np.floating)) and np.isfinite(value):
        if float(value).is_integer() and 0 <= value < 2**53:
            return [int(value)]
        return []
    if isinstance(value, str):
        s = value.strip()
        if s.isdigit():
            return [int(s)]
        if re.fullmatch(r"(0x)?[0-9a-fA-F]{8,64}", s):
            return [int(s, 16)]
        return []
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu" and value.dtype.names is None:
        unique = np.unique(value)
        return [int(v) for v in unique] if unique.size <= 64 else []
    return []


def _rng_candidates(value, label):
    """Replays from a generator-like object: the object as found, and its seed."""
    out = []
    if isinstance(value, (np.random.Generator, np.random.RandomState)):
        out.append(_Candidate(f"{label} (as found)", lambda v=value: copy.deepcopy(v)))
        bit_generator = value.bit_generator if isinstance(value, np.random.Generator) else None
        if bit_generator is not None:
            out += _rng_candidates(bit_generator, f"{label}.bit_generator")
    elif isinstance(value, np.random.BitGenerator):
        out.append(_Candidate(f"{label} (as found)",
                              lambda v=value: np.random.Generator(copy.deepcopy(v))))
        seed_seq = getattr(value, "seed_seq", None) or getattr(value, "_seed_seq", None)
        if isinstance(seed_seq, np.random.SeedSequence):
            out += _rng_candidates(seed_seq, f"{label}.seed_seq")
    elif isinstance(value, np.random.SeedSequence):
        out.append(_Candidate(f"{label}", lambda v=value: np.random.default_rng(v)))
        entropy = value.entropy
        if isinstance(entropy, (int, np.integer)):
            out.append(_Candidate(f"{label}.entropy", lambda e=int(entropy): e))
    return out


def harvest_candidates(model):
    """Every int and generator found in ``model``, its deep params and its pickled copy."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        unpickled = pickle.loads(pickle.dumps(model))
    sources = [("obj", model), ("pickle", unpickled)]
    if isinstance(model, BaseEstimator):
        sources.append(("params", model.get_params(deep=True)))
    ints, objects = {}, []
    for name, root in sources:
        for path, value in walk(root):
            label = f"{name}:{path_str(path)}"
            if isinstance(value, _RNG_TYPES):
                objects += _rng_candidates(value, label)
            for v in _int_candidates(value):
                ints.setdefault(v, label)
    return [_Candidate(f"{label}={v}", lambda v=v: v) for v, label in ints.items()] + objects


# --------------------------------------------------------------------------- replay


def noisy_fingerprint(model):
    """``{path: array}`` of every mechanism output released anywhere in ``model``."""
    out = {}
    for path, value in walk(model):
        if path and path[-1] in NOISY_ATTRIBUTES and isinstance(value, np.ndarray):
            out[path] = value
    return out


def _get(model, path):
    for key in path:
        model = model[key] if isinstance(model, (list, tuple, dict)) else getattr(model, key)
    return model


def _replay_targets(model):
    """The model and every nested fitted estimator that holds a mechanism output."""
    targets = []
    for path, value in walk(model):
        if isinstance(value, BaseEstimator) and "random_state" in value.get_params(deep=False):
            fingerprint = noisy_fingerprint(value)
            if path == () or fingerprint:
                targets.append((path, value, fingerprint))
    return targets


def _views(X, y, fingerprint):
    """Training sets to replay on: all rows, and the first ``n'`` rows for a sub-fit.

    A candidate fitted inside a search sees a secret subset of rows; tests that
    attack a search use data whose rows are interchangeable for the mechanism
    (equal labels and a uniform prior), so any ``n'`` rows stand in for it.
    """
    views = [(X, y)]
    lengths = {v.shape[0] for p, v in fingerprint.items() if p[-1] != "coef_" and v.ndim}
    for n in sorted(lengths):
        if 0 < n < len(y):
            views.append((X[:n], y[:n]))
    return views


def _same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)


# A replayed output counts as a match only if chance could not explain it: the
# output must differ from unseeded replays in at least this many entries.
MIN_RANDOM_ENTRIES = 16


def _n_differences(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return np.inf
    return int(np.count_nonzero(a != b))


def _refit(target, random_state, X, y):
    est = clone(target)
    params = {"random_state": random_state}
    if "accountant" in est.get_params(deep=False):
        params["accountant"] = None
    est.set_params(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def replay_attack(model, X, y):
    """Try every harvested seed on every replayable part of ``model``.

    Returns a list of successes ``(target path, candidate, matched attribute)``;
    an empty list means the attack failed.
    """
    candidates = harvest_candidates(model)
    successes = []
    for path, target, _ in _replay_targets(model):
        original = noisy_fingerprint(_get(model, path))
        if not original:
            continue
        for X_view, y_view in _views(X, y, original):
            # An output that fresh, unseeded replays reproduce, or nearly (e.g. RRWithPrior
            # with a prior so sharp that k* = 1 almost everywhere), carries too few random
            # bits for an exact match with one of many harvested candidates to identify
            # the coins: keep only outputs that differ from every fresh replay in at
            # least MIN_RANDOM_ENTRIES places.
            usable = dict(original)
            for _ in range(2):
                try:
                    fresh = noisy_fingerprint(_refit(target, None, X_view, y_view))
                except Exception:  # noqa: BLE001
                    fresh = {}
                for key, value in fresh.items():
                    if key in usable and _n_differences(usable[key], value) < MIN_RANDOM_ENTRIES:
                        del usable[key]
            for candidate in candidates:
                try:
                    replayed = noisy_fingerprint(_refit(target, candidate.make(), X_view, y_view))
                except Exception:  # noqa: BLE001 - an invalid seed is a failed guess
                    continue
                for key, value in usable.items():
                    if key in replayed and _same(replayed[key], value):
                        successes.append((path_str(path), candidate, path_str(key)))
                        break
            if successes:
                return successes
    return successes


# --------------------------------------------------------------------------- state checks


def find_forbidden(model):
    """Internally derived randomness stored anywhere in ``model`` fitted with random_state=None.

    Reports every ``random_state`` parameter of a nested estimator that is not
    None, every generator-like object, and every seed-sized integer (>= 2**20).
    """
    problems = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        unpickled = pickle.loads(pickle.dumps(model))
    for name, root in (("obj", model), ("pickle", unpickled)):
        for path, value in walk(root):
            where = f"{name}:{path_str(path)}"
            if isinstance(value, BaseEstimator):
                for key, v in value.get_params(deep=True).items():
                    if (key == "random_state" or key.endswith("__random_state")) and v is not None:
                        problems.append(f"{where}.get_params()[{key!r}] = {v!r}")
            elif isinstance(value, _RNG_TYPES):
                problems.append(f"{where} is a {type(value).__name__}")
            elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
                if abs(int(value)) >= 2**20:
                    problems.append(f"{where} = {int(value)} (seed-sized integer)")
            elif isinstance(value, np.ndarray) and value.dtype.kind in "iu" and value.size:
                if value.dtype.names is None and np.abs(value.astype(np.float64)).max() >= 2**20:
                    problems.append(f"{where} holds seed-sized integers")
    return sorted(set(problems))


def signature(model):
    """What a fit's structure and discrete values look like, path by path.

    Floats are compared by kind only (they carry noise); integers, booleans and
    strings by value; arrays by shape, dtype and, for integer/bool arrays, value.
    """
    sig = {}
    for path, value in walk(model):
        key = path_str(path)
        if isinstance(value, np.ndarray):
            entry = ("array", value.shape, str(value.dtype))
            if value.dtype.kind in "biu" and value.dtype.names is None:
                entry += (value.tobytes(),)
            sig[key] = entry
        elif isinstance(value, (bool, np.bool_, int, np.integer, str)):
            sig[key] = (type(value).__name__, value)
        elif isinstance(value, (float, np.floating)):
            sig[key] = ("float",)
        else:
            sig[key] = (type(value).__name__,)
    return sig


def diff_signatures(a, b, allowed):
    """Paths whose signatures differ between ``a`` and ``b``, less those ``allowed`` covers."""
    changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return [k for k in changed if not any(fnmatch.fnmatchcase(k, g) for g in allowed)]
