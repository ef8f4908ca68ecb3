"""Priors for RRWithPrior: uniform, from a public model, with temperature."""

from ._priors import apply_temperature, model_prior, uniform_prior

__all__ = ["apply_temperature", "model_prior", "uniform_prior"]
