"""Small helpers shared across the package."""

from ._dask import is_dask
from ._discovery import all_estimators
from ._progress import progress
from ._random import (
    SECURE,
    DerivedRandomState,
    check_generator,
    derived_random_state,
    forget_derived_seeds,
    spawn_generators,
)
from ._seal import SealedCall, public_stderr, sealed

__all__ = [
    "SECURE",
    "DerivedRandomState",
    "SealedCall",
    "all_estimators",
    "check_generator",
    "derived_random_state",
    "forget_derived_seeds",
    "is_dask",
    "progress",
    "public_stderr",
    "sealed",
    "spawn_generators",
]
