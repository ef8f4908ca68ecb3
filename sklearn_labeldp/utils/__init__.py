"""Small helpers shared across the package."""

from ._dask import (
    dask_frames_as_arrays,
    is_dask,
    is_dask_frame,
    map_row_blocks,
    row_blocks_on_dask,
)
from ._discovery import all_estimators
from ._estimator_checks import expected_failed_checks
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
from ._validation import (
    check_finite,
    check_int,
    check_known_rows,
    check_label_range,
    check_nonnegative,
    check_option,
    check_positive,
    check_unit_interval,
    check_value_prior,
)

__all__ = [
    "expected_failed_checks",
    "SECURE",
    "DerivedRandomState",
    "SealedCall",
    "all_estimators",
    "check_finite",
    "check_generator",
    "check_int",
    "check_known_rows",
    "check_label_range",
    "check_nonnegative",
    "check_option",
    "check_positive",
    "check_unit_interval",
    "check_value_prior",
    "dask_frames_as_arrays",
    "derived_random_state",
    "forget_derived_seeds",
    "is_dask",
    "is_dask_frame",
    "map_row_blocks",
    "progress",
    "public_stderr",
    "row_blocks_on_dask",
    "sealed",
    "spawn_generators",
]
