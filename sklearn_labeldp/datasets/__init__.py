"""Synthetic generators and loaders for the benchmark data."""

from ._synthetic import make_circle_gaussians

__all__ = ["make_circle_gaussians"]
