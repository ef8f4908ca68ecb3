"""Priors for RRWithPrior: uniform, from a public model, with temperature, cluster groups."""

from ._cluster import cluster_assignment
from ._priors import apply_temperature, model_prior, uniform_prior

__all__ = ["apply_temperature", "cluster_assignment", "model_prior", "uniform_prior"]
