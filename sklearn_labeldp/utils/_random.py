"""Random generators for mechanisms and estimators.

Privacy mechanisms need fresh randomness: ``random_state=None`` therefore seeds
from the operating system's entropy (never from a fixed default), an integer
gives reproducible runs, and a :class:`numpy.random.Generator` is used as is.
"""

from numbers import Integral

import numpy as np

__all__ = ["check_generator", "spawn_seeds"]


def check_generator(random_state=None):
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        ``None`` seeds from operating-system entropy; an int seeds
        deterministically; a ``Generator`` is returned unchanged (its state
        advances as it is used); a legacy ``RandomState`` (scikit-learn's
        convention) seeds a new generator from 128 bits drawn from it.

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
    if random_state is None or (
        isinstance(random_state, Integral) and not isinstance(random_state, bool)
    ):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        # 128 bits of seed: a short seed could be brute-forced from public outputs.
        return np.random.default_rng(random_state.randint(2**32, size=4, dtype=np.uint64))
    raise TypeError(
        "random_state must be None, an int, a numpy.random.Generator or a "
        f"numpy.random.RandomState; got {type(random_state).__name__}."
    )


def spawn_seeds(rng, n):
    """Draw ``n`` independent integer seeds for child estimators or jobs.

    The seeds come from a :class:`numpy.random.SeedSequence` built on one draw of
    ``rng``, so children never share a stream with each other or with ``rng``.

    Parameters
    ----------
    rng : numpy.random.Generator
    n : int

    Returns
    -------
    list of int
        Seeds in ``[0, 2**32)``, valid for any scikit-learn ``random_state``.
    """
    root = np.random.SeedSequence(int(rng.integers(2**63)))
    return [int(child.generate_state(1)[0]) for child in root.spawn(n)]
