"""Priors for RRWithPrior: uniform, from a public model, with temperature, from clusters."""

from ._cluster import ClusterPrior, cluster_assignment
from ._priors import apply_temperature, model_prior, uniform_prior

__all__ = [
    "ClusterPrior",
    "apply_temperature",
    "cluster_assignment",
    "model_prior",
    "uniform_prior",
]
