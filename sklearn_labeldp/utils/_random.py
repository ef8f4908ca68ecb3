"""Random generators for mechanisms and estimators.

Privacy mechanisms need fresh, secret randomness. Whoever can replay the coins
of a mechanism can subtract its noise, so:

- ``random_state=None`` seeds from 128 bits of operating-system entropy (never
  from a fixed default); an int gives reproducible runs, and is therefore a
  replay key as secret as the labels; ``"secure"`` is ``None`` with a
  cryptographically secure bit generator (AES-128 in counter mode, from the
  optional ``randomgen`` package) instead of PCG64, whose outputs, unlike
  PCG64's, do not give away its state;
- work split across stages, candidates or jobs gets independent child
  generators spawned from a :class:`numpy.random.SeedSequence` with at least
  128 bits of entropy, never narrowed integer seeds;
- seeds handed to base estimators are :class:`DerivedRandomState` objects,
  recognisable after the fit, so that :func:`forget_derived_seeds` can put
  back the user's ``random_state`` on everything that is returned.
"""

from numbers import Integral

import numpy as np

__all__ = [
    "SECURE",
    "DerivedRandomState",
    "check_generator",
    "derived_random_state",
    "forget_derived_seeds",
    "spawn_generators",
]

# 256 bits drawn from a caller's generator seed a new SeedSequence.
_ENTROPY_WORDS = 8
# The random_state that asks for fresh entropy and a cryptographically secure stream.
SECURE = "secure"
_RANDOM_STATE_TYPES = (
    "random_state must be None, 'secure', an int, a numpy.random.Generator or a "
    "numpy.random.RandomState"
)


def _secure_bit_generator():
    try:
        from randomgen import AESCounter
    except ImportError as exc:
        raise ImportError(
            "random_state='secure' needs the randomgen package: "
            "pip install 'sklearn-labeldp[secure]'."
        ) from exc
    return AESCounter


def is_secure_generator(rng):
    """Whether ``rng`` draws from the secure AES counter-mode bit generator.

    Parameters
    ----------
    rng : numpy.random.Generator

    Returns
    -------
    bool
        False whenever ``randomgen`` is not installed (no such generator exists).
    """
    try:
        bit_generator = _secure_bit_generator()
    except ImportError:
        return False
    return isinstance(rng.bit_generator, bit_generator)


def _is_secure(random_state):
    return isinstance(random_state, str) and random_state == SECURE


def _is_int_seed(random_state):
    return isinstance(random_state, Integral) and not isinstance(random_state, bool)


def check_generator(random_state=None):
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    random_state : None, "secure", int, numpy.random.Generator or numpy.random.RandomState
        ``None`` seeds from operating-system entropy; ``"secure"`` too, with
        an AES counter-mode bit generator (needs ``randomgen``); an int seeds
        deterministically; a ``Generator`` is returned unchanged (its state
        advances as it is used); a legacy ``RandomState`` (scikit-learn's
        convention) seeds a new generator from 256 bits drawn from it.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> from sklearn_labeldp.utils import check_generator
    >>> check_generator(0).integers(10, size=3).tolist() == check_generator(0).integers(
    ...     10, size=3).tolist()
    True
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or _is_int_seed(random_state):
        return np.random.default_rng(random_state)
    root, bit_generator = _root(random_state)
    return np.random.Generator(bit_generator(root))


def _draw_entropy(source):
    """256 bits from a Generator or RandomState, advancing it."""
    if isinstance(source, np.random.Generator):
        return source.integers(2**32, size=_ENTROPY_WORDS, dtype=np.uint64)
    return source.randint(2**32, size=_ENTROPY_WORDS, dtype=np.uint64)


def _root(random_state):
    """The root seed sequence of ``random_state`` and the bit generator its children use."""
    if random_state is None or _is_int_seed(random_state):
        return np.random.SeedSequence(random_state), np.random.PCG64  # None: 128 OS bits
    if _is_secure(random_state):
        return np.random.SeedSequence(), _secure_bit_generator()
    if isinstance(random_state, np.random.Generator):
        # Spawning from a Generator reuses its readable seed sequence without
        # advancing it; fresh draws make every fit's children new. The children
        # keep its kind of bit generator (a secure one stays secure).
        return np.random.SeedSequence(_draw_entropy(random_state)), type(
            random_state.bit_generator
        )
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(_draw_entropy(random_state)), np.random.PCG64
    raise TypeError(f"{_RANDOM_STATE_TYPES}; got {random_state!r}.")


def spawn_generators(random_state, n):
    """``n`` independent generators for the parts of one fit.

    Parameters
    ----------
    random_state : None, "secure", int, numpy.random.Generator or numpy.random.RandomState
        ``None``: a root of 128 bits of operating-system entropy. ``"secure"``:
        the same root, and AES counter-mode bit generators. An int: a
        reproducible root. A ``Generator`` or ``RandomState``: a root of 256
        bits drawn from it (so it advances, and two calls give different
        children); a ``Generator``'s children use its kind of bit generator.
    n : int

    Returns
    -------
    list of numpy.random.Generator
        Children of one :class:`numpy.random.SeedSequence`: no two share a
        stream, and none can be derived from another.

    Examples
    --------
    >>> from sklearn_labeldp.utils import spawn_generators
    >>> a, b = spawn_generators(0, 2)
    >>> bool(a.integers(2**62) != b.integers(2**62))
    True
    """
    root, bit_generator = _root(random_state)
    return [np.random.Generator(bit_generator(child)) for child in root.spawn(n)]


class DerivedRandomState(np.random.RandomState):
    """A ``RandomState`` seed that the library handed to a base estimator.

    Any scikit-learn estimator accepts it as ``random_state``. It survives
    ``clone``, ``copy`` and ``pickle`` as its own type, so after a fit every
    parameter holding one can be found and reset to the user's ``None`` by
    :func:`forget_derived_seeds`.
    """

    def __reduce__(self):
        return (_rebuild_derived_random_state, (self.get_state(legacy=False),))


def _rebuild_derived_random_state(state):
    random_state = DerivedRandomState(np.random.MT19937(0))
    random_state.set_state(state)
    return random_state


def derived_random_state(rng):
    """A :class:`DerivedRandomState` seeded with 256 bits drawn from ``rng``.

    Parameters
    ----------
    rng : numpy.random.Generator

    Returns
    -------
    DerivedRandomState
    """
    return DerivedRandomState(np.random.MT19937(np.random.SeedSequence(_draw_entropy(rng))))


def forget_derived_seeds(obj):
    """Reset every ``random_state`` the library derived, on ``obj`` and its fitted parts.

    Walks the parameters (nested too) of ``obj`` and of every fitted
    sub-estimator held in an attribute ending in ``_`` (also inside lists,
    tuples and dicts), and sets each parameter holding a
    :class:`DerivedRandomState` back to ``None``, the value it had before the
    library seeded it. The fitted state is untouched.

    Parameters
    ----------
    obj : estimator, list, tuple or dict

    Returns
    -------
    obj
    """
    _forget(obj, set())
    return obj


def _forget(obj, seen):
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, list | tuple):
        for item in obj:
            _forget(item, seen)
        return
    if isinstance(obj, dict):
        for item in obj.values():
            _forget(item, seen)
        return
    if not (hasattr(obj, "get_params") and hasattr(obj, "set_params")):
        return
    derived = {
        key: None
        for key, value in obj.get_params(deep=True).items()
        if isinstance(value, DerivedRandomState)
    }
    if derived:
        obj.set_params(**derived)
    for name, value in vars(obj).items():
        if name.endswith("_") and not name.startswith("_"):
            _forget(value, seen)
