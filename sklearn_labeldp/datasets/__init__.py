"""Synthetic generators and loaders for the benchmark data.

The loaders read files already on disk: UCI Adult from a folder given by the
caller (or, for :func:`fetch_adult` when none is given, OpenML's copy cached
in scikit-learn's data home), Fashion-MNIST from the Debian package
``dataset-fashion-mnist`` or a given folder.
"""

from ._adult import fetch_adult, load_adult
from ._fashion_mnist import load_fashion_mnist
from ._synthetic import make_circle_gaussians

__all__ = ["fetch_adult", "load_adult", "load_fashion_mnist", "make_circle_gaussians"]
