"""Small helpers shared across the package."""

from ._random import check_generator, spawn_seeds

__all__ = ["check_generator", "spawn_seeds"]
