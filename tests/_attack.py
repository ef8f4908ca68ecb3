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
import functools
import pickle
import re
import sys
import types
import warnings
import weakref

import numpy as np
from sklearn.base import BaseEstimator, clone

__all__ = [
    "NOISY_ATTRIBUTES",
    "diff_signatures",
    "estimator_types",
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
# Classes and modules are code, shared by every fit, not fitted state.
_OPAQUE_TYPES = (types.ModuleType, type)


def _torch():
    """The torch module when something already imported it (never imported here)."""
    return sys.modules.get("torch")


def _is_tensor(obj):
    torch = _torch()
    return torch is not None and isinstance(obj, torch.Tensor)


def _is_torch_leaf(obj):
    torch = _torch()
    return torch is not None and isinstance(obj, (torch.device, torch.dtype, torch.Generator))


def _overrides_getstate(obj):
    getstate = getattr(type(obj), "__getstate__", None)
    return getstate is not None and getstate is not object.__getstate__


def _slot_items(obj):
    out = []
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            try:
                out.append((name, getattr(obj, name)))
            except AttributeError:  # an unset slot
                pass
    return out


def _key_name(key, i):
    if isinstance(key, str):
        return key
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        return str(int(key))
    if isinstance(key, (bool, float, type(None))) or (
        isinstance(key, tuple) and all(isinstance(k, (str, int)) for k in key)
    ):
        return repr(key)
    return None


def _dict_children(obj):
    out = []
    for i, (key, value) in enumerate(list(obj.items())):
        name = _key_name(key, i)
        if name is None:  # e.g. an optimizer's state, keyed by the parameter tensors
            out += [(f"<key{i}>", key), (f"<value{i}>", value)]
        else:
            out.append((name, value))
    return out


def _function_children(obj):
    out = []
    if isinstance(obj, (types.MethodType, types.BuiltinMethodType)):
        owner = getattr(obj, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            out.append(("__self__", owner))
        if isinstance(obj, types.MethodType):
            out.append(("__func__", obj.__func__))
    if isinstance(obj, types.FunctionType):
        names = obj.__code__.co_freevars
        for name, cell in zip(names, obj.__closure__ or (), strict=True):
            try:
                out.append((f"<closure {name}>", cell.cell_contents))
            except ValueError:  # an empty cell
                pass
        out += [("__defaults__", obj.__defaults__), ("__kwdefaults__", obj.__kwdefaults__)]
        out += list(vars(obj).items())
    return out


def _tensor_children(obj):
    """A tensor's reachable state besides its values: gradient, attributes, base, graph."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # .grad of a non-leaf warns
        grad = obj.grad
    if grad is not None:
        out.append(("grad", grad))
    out += list(vars(obj).items())  # tensor attributes (e.g. Opacus's grad_sample)
    if obj._base is not None:  # a view keeps its whole base reachable
        out.append(("_base", obj._base))
    if obj.grad_fn is not None:
        out.append(("grad_fn", obj.grad_fn))
    return out


def _autograd_children(node):
    """An autograd node's saved tensors, its variable and the nodes it feeds from."""
    out = []
    for name in dir(node):
        if name.startswith("_saved_") or name == "variable":
            try:
                out.append((name, getattr(node, name)))
            except RuntimeError:  # freed after backward
                pass
    out += [(f"next{i}", fn) for i, (fn, _) in enumerate(node.next_functions) if fn is not None]
    return out


def _is_autograd_node(obj):
    torch = _torch()
    return torch is not None and isinstance(obj, torch.autograd.graph.Node)


def _children(obj):
    """The (name, value) pairs one step below ``obj``: everything an attacker reaches.

    Containers give their items; objects their ``__dict__``, ``__slots__``,
    dataclass fields and, where the class defines its own ``__getstate__``, the
    entries of that state that are not already attributes; numpy arrays their
    base and (object dtype) elements; torch tensors their gradient, their own
    attributes, their base and autograd graph. ``torch.nn.Module`` internals,
    optimizers' ``state`` and ``param_groups``, skorch's ``callbacks_`` and
    ``history_`` are plain attributes, dicts and lists, so this reaches them.
    """
    if _is_tensor(obj):
        return _tensor_children(obj)
    if _is_autograd_node(obj):
        return _autograd_children(obj)
    out = []
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            out += [(str(i), v) for i, v in enumerate(np.asarray(obj).ravel().tolist())]
        if obj.base is not None:
            out.append(("<base>", obj.base))
        if isinstance(obj, np.ma.MaskedArray):
            out.append(("<mask>", np.ma.getmaskarray(obj)))
        return out
    if isinstance(obj, dict):
        out += _dict_children(obj)
    elif isinstance(obj, (list, tuple)):
        out += [(str(i), v) for i, v in enumerate(obj)]
    elif isinstance(obj, (set, frozenset)):
        out += [(str(i), v) for i, v in enumerate(sorted(obj, key=repr))]
    elif isinstance(obj, functools.partial):
        out += [("func", obj.func), ("args", obj.args), ("keywords", obj.keywords)]
    elif isinstance(obj, weakref.ref):
        referent = obj()
        if referent is not None:
            out.append(("<referent>", referent))
    elif isinstance(obj, types.CellType):
        try:
            out.append(("cell_contents", obj.cell_contents))
        except ValueError:
            pass
    elif isinstance(obj, (types.FunctionType, types.MethodType, types.BuiltinMethodType)):
        return _function_children(obj)
    names = {name for name, _ in out}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out += [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if hasattr(obj, f.name)]
    attributes = getattr(obj, "__dict__", None)
    if isinstance(attributes, dict):
        out += _dict_children(attributes)
    out += _slot_items(obj)
    if _overrides_getstate(obj) and not isinstance(obj, (dict, list, tuple, set)):
        # What pickling writes: entries a custom __getstate__ adds or replaces (sklearn's
        # version tag, skorch's modules serialised to bytes, a Cython tree's arrays).
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a fit with a user seed warns on pickling
                state = obj.__getstate__()
        except Exception:  # noqa: BLE001 - an attacker ignores what it cannot read
            state = None
        parts = state if isinstance(state, tuple) and len(state) == 2 else (state,)
        for part in parts:
            if isinstance(part, dict):
                for i, (key, value) in enumerate(part.items()):
                    name = _key_name(key, i) or f"<state{i}>"
                    known = attributes.get(key, _MISSING) if isinstance(attributes, dict) \
                        else _MISSING
                    if known is not value:
                        out.append((name if name not in names else f"<state>.{name}", value))
            elif part is not None:
                out.append(("<state>", part))
    return out


_MISSING = object()


def _is_leaf(obj):
    return (
        isinstance(obj, _LEAF_TYPES)
        or isinstance(obj, _OPAQUE_TYPES)
        or _is_torch_leaf(obj)
    )


def walk(obj, *, max_depth=60):
    """Yield ``(path, value)`` for ``obj`` and everything reachable from it.

    A container is expanded once (at the first path that reaches it, depth
    first); a scalar is yielded at every path. Everything found is kept alive
    until the walk ends, so that ``id`` stays unique for states that
    ``__getstate__`` builds on the fly.
    """
    seen, alive = set(), []
    stack = [((), obj)]
    while stack:
        path, value = stack.pop()
        yield path, value
        if _is_leaf(value) or len(path) >= max_depth or id(value) in seen:
            continue
        seen.add(id(value))
        alive.append(value)
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


def estimator_types(estimator):
    """The class names of ``estimator`` and of every estimator among its parameters.

    What a suite that must cover every public estimator checks its cases against.
    """
    found = {type(estimator).__name__}
    for value in estimator.get_params(deep=True).values():
        if hasattr(value, "get_params") and not isinstance(value, type):
            found.add(type(value).__name__)
    return found


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


# --------------------------------------------------------------------------- allowlist


def declared_patterns(obj):
    """``(_dp_outputs, _derived_attributes)`` of a library estimator, None for anything else."""
    outputs = getattr(type(obj), "_dp_outputs", None)
    derived = getattr(type(obj), "_derived_attributes", None)
    if outputs is None or derived is None:
        return None
    return tuple(outputs), tuple(derived)


def _cover(parent, key, child, rel, covered, patterns, params, tensor_part):
    """How the child ``key`` of ``parent`` (at ``rel`` below its estimator) is covered.

    Returns ``"derived"`` (a derived attribute, a parameter, or under one),
    ``"dp"`` (a DP output or under one) or None. Coverage passes down to
    everything below a declared path, with two cuts where a declaration would
    otherwise release more than it names: the base of a view onto part of a
    larger array, and a tensor's gradient, own attributes, base and autograd
    graph below a DP output (the mechanism released the tensor's values, not
    e.g. Opacus's unnoised ``summed_grad``): those are covered only by a
    pattern whose last component names them (``*.grad``), or by a derived
    declaration above them, everything below which is post-processing.
    """
    outputs, derived = patterns
    if key in _BASES and _size(child) > _size(parent):
        inherited = None
    elif tensor_part and covered == "dp":
        inherited = None
        outputs = [p for p in outputs if p.rsplit(".", 1)[-1] == key]
        derived = [p for p in derived if p.rsplit(".", 1)[-1] == key]
    else:
        inherited = covered
    if inherited == "derived" or key in params:
        return "derived"
    if any(fnmatch.fnmatchcase(rel, p) for p in derived):
        return "derived"
    if inherited == "dp" or any(fnmatch.fnmatchcase(rel, p) for p in outputs):
        return "dp"
    return None


def _is_array(value):
    return isinstance(value, np.ndarray) or _is_tensor(value)


def _scalar_value(value):
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return ("float", value.hex()) if value == value else ("float", "nan")
    if isinstance(value, bytes):
        return ("bytes", len(value), hash(value))
    return (type(value).__name__, value if isinstance(value, (int, str, bool)) else repr(value))


@dataclasses.dataclass
class Audit:
    """What a walk of a fitted estimator found outside its declared allowlist.

    ``undeclared`` names every ndarray or tensor that no declaration covers,
    and every nested library estimator held at a path its owner does not
    declare; ``outside`` maps each path outside the declarations to what an
    attacker reads there (a scalar's value, a container's type, an array's
    shape and dtype) for comparison between neighbouring fits.
    """

    undeclared: list
    outside: dict


_BASES = ("<base>", "_base")


def _size(value):
    if _is_tensor(value):
        return value.numel()
    return value.size if isinstance(value, np.ndarray) else 0


def _views_cover(base, parts):
    """Whether the views ``parts`` of the numpy array ``base`` together show all of it."""
    if _is_tensor(base) or not base.flags.c_contiguous or base.dtype.itemsize == 0:
        return False
    shown = np.zeros(base.size, dtype=bool)
    start = base.__array_interface__["data"][0]
    for part in parts:
        if part.dtype.itemsize != base.dtype.itemsize:
            return False
        offset, rest = divmod(part.__array_interface__["data"][0] - start, base.dtype.itemsize)
        if rest or offset < 0:
            return False
        index = np.lib.stride_tricks.as_strided(
            np.arange(base.size)[offset:], shape=part.shape,
            strides=[s // base.dtype.itemsize * 8 for s in part.strides],
        )
        shown[index.ravel()] = True
    return bool(shown.all())


def _array_digest(value):
    """Shape, dtype and a hash of the values of an ndarray or tensor."""
    if _is_tensor(value):
        try:
            value = value.detach().cpu().numpy()
        except (RuntimeError, TypeError):  # e.g. bfloat16, a meta tensor: shape only
            return (tuple(value.shape), str(value.dtype))
    if value.dtype == object:
        return (value.shape, "object")
    return (value.shape, str(value.dtype), hash(np.ascontiguousarray(value).tobytes()))


def audit(model, *, prefix=""):
    """Walk ``model`` against the allowlists its classes declare.

    A path is covered when a pattern of ``_dp_outputs`` or
    ``_derived_attributes`` of the innermost library estimator above it
    (fnmatch on the dotted path below that estimator) matches the path or one
    of its ancestors (except across the cuts :func:`_cover` describes), or
    when it lies under one of that estimator's constructor parameters (the
    user's input; ``fit`` does not mutate them, which
    :func:`params_fingerprint` checks). A nested library estimator's
    own declarations apply below it, and its own path must be covered by its
    owner's. The root is judged by its declarations (none for a class that
    declares nothing, so everything it holds is undeclared).

    Paths reached both inside and outside the declarations count as covered
    (an alias of a released object releases nothing new), so covered entries
    are walked first.
    """
    covered_stack, open_stack = [], []
    alive, expanded, scopes = [], {}, {}
    covered_arrays, open_arrays, open_entries, views = set(), {}, [], {}

    def push(entry):
        (covered_stack if entry[5] else open_stack).append(entry)

    push(((), model, 0, ((), ()), (), None, None))
    while covered_stack or open_stack:
        path, value, start, patterns, params, covered, parent = (
            covered_stack.pop() if covered_stack else open_stack.pop()
        )
        where = prefix + path_str(path)
        if _is_leaf(value):
            if not covered:
                open_entries.append((where, _scalar_value(value), parent, None))
            continue
        if _is_array(value):
            if covered:
                covered_arrays.add(id(value))
                base = value._base if _is_tensor(value) else getattr(value, "base", None)
                if base is not None and _size(base) > _size(value):
                    views.setdefault(id(base), (base, []))[1].append(value)
            else:
                open_arrays.setdefault(id(value), where)
        own = declared_patterns(value)
        if own is not None or path == ():
            # A library estimator: its own lists apply below it.
            first = id(value) not in scopes
            scopes[id(value)] = scopes.get(id(value), (where, False))
            if covered or path == ():
                scopes[id(value)] = (scopes[id(value)][0], True)
            if not first:
                continue
            alive.append(value)
            start, patterns, covered = len(path), own or ((), ()), None
            params = tuple(value.get_params(deep=False)) if isinstance(value, BaseEstimator) \
                else ()
        else:
            if not covered:
                digest = _array_digest(value) if _is_array(value) else ()
                open_entries.append((where, (type(value).__name__, *digest), parent,
                                     id(value) if _is_array(value) else None))
            if id(value) in expanded and (expanded[id(value)] or not covered):
                continue
            if len(path) >= 60:
                continue
            alive.append(value)
            expanded[id(value)] = covered
        tensor_parts = {name for name, _ in _tensor_children(value)} if _is_tensor(value) \
            else ()
        for key, child in reversed(_children(value)):
            rel = ".".join(map(str, (*path[start:], key)))
            child_covered = _cover(value, key, child, rel, covered, patterns,
                                   params if len(path) == start else (), key in tensor_parts)
            push(((*path, key), child, start, patterns, params, child_covered, id(value)))

    for i, (base, parts) in views.items():
        if _views_cover(base, parts):  # e.g. the columns of a table, each declared
            covered_arrays.add(i)
    undeclared = [where for i, where in open_arrays.items() if i not in covered_arrays]
    undeclared += [f"{where} (a nested library estimator its owner does not declare)"
                   for where, ok in scopes.values() if not ok]
    outside = {where: what for where, what, parent, array in open_entries
               if not expanded.get(parent, False) and array not in covered_arrays}
    return Audit(sorted(undeclared), outside)


def audit_released(model):
    """:func:`audit` of ``model`` and of its pickled copy (paths prefixed ``pickle:``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        unpickled = pickle.loads(pickle.dumps(model))
    direct, copied = audit(model), audit(unpickled, prefix="pickle:")
    return Audit(direct.undeclared + copied.undeclared, {**direct.outside, **copied.outside})


# Paths outside every declaration whose values may differ between two fits on the
# same data with the same seed, for reasons that are not the labels. Each entry:
# glob over the reported path -> why it is unavoidable.
SCALAR_EXCEPTIONS = {
    "*history_.*.dur": "skorch's wall-clock epoch duration: varies run to run with the load",
    "*.__cuda_dependent_attributes__": "skorch's __getstate__ serialises module_, optimizer_ "
    "and criterion_ into one torch.save blob, which holds the trained weights; the walk of "
    "the unpickled copy (pickle:...) checks what it loads into, attribute by attribute",
}


def diff_outside(a, b, exceptions=SCALAR_EXCEPTIONS):
    """Paths outside the declarations whose content differs between audits ``a`` and ``b``."""
    changed = sorted(k for k in set(a.outside) | set(b.outside)
                     if a.outside.get(k) != b.outside.get(k))
    return [f"{k}: {a.outside.get(k, '<absent>')!r:.60} -> {b.outside.get(k, '<absent>')!r:.60}"
            for k in changed if not any(fnmatch.fnmatchcase(k, g) for g in exceptions)]


def params_fingerprint(estimator):
    """A hash of ``estimator``'s own parameters, to check that ``fit`` leaves them as given.

    The accountant (charged by design) and a generator ``random_state`` (whose
    stream a fit consumes, as in scikit-learn) are left out.
    """
    import joblib

    params = {
        key: value for key, value in estimator.get_params(deep=False).items()
        if key != "accountant" and not isinstance(value, _RNG_TYPES)
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return joblib.hash(params)


# --------------------------------------------------------------------------- emissions


def _exception_chain(exc):
    """Type, text and raising lines of ``exc`` and of every exception it chains."""
    chain, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        frames, tb = [], exc.__traceback__
        while tb is not None:
            frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
            tb = tb.tb_next
        chain.append((type(exc).__name__, str(exc), tuple(frames)))
        exc = exc.__cause__ or exc.__context__
    return tuple(chain)


@dataclasses.dataclass
class Observation:
    """What the caller of one ``fit`` sees besides the returned object.

    ``emitted`` holds the warnings (category, text, file, line), the text
    written to file descriptors 1 and 2, the log records (logger, level,
    text) and, for a failed fit, the exception chain (type, text, raising
    lines); ``model`` is the fitted estimator, None when the fit failed.
    """

    model: object
    emitted: dict


def observe_fit(estimator, X, y, capfd, caplog):
    """Fit ``estimator`` while recording every warning, fd-level output, log record and error.

    ``capfd`` and ``caplog`` are pytest's fixtures: output is read at the file
    descriptor level, so a C extension or a worker writing to fd 1 or 2 is seen.
    """
    capfd.readouterr()
    caplog.clear()
    model, error = None, None
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        try:
            model = estimator.fit(X, y)
        except Exception as exc:  # noqa: BLE001 - the failure itself is an emission
            error = _exception_chain(exc)
    out, err = capfd.readouterr()
    emitted = {
        "warnings": [(w.category.__name__, str(w.message), w.filename, w.lineno)
                     for w in record],
        "stdout": out,
        "stderr": err,
        "logs": [(r.name, r.levelname, r.getMessage()) for r in caplog.records],
        "error": error,
    }
    return Observation(model, emitted)


def diff_emissions(a, b):
    """Channels whose emissions differ between observations ``a`` and ``b``, with both sides."""
    return [f"{channel}: {a.emitted[channel]!r:.300} -> {b.emitted[channel]!r:.300}"
            for channel in a.emitted if a.emitted[channel] != b.emitted[channel]]
