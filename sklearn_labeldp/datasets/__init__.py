"""Synthetic generators and loaders for the benchmark data.

The loaders read files already on disk (nothing downloads): UCI Adult from a
folder given by the caller, Fashion-MNIST from the Debian package
``dataset-fashion-mnist`` or a given folder.
"""

from ._adult import load_adult
from ._fashion_mnist import load_fashion_mnist
from ._synthetic import make_circle_gaussians

__all__ = ["load_adult", "load_fashion_mnist", "make_circle_gaussians"]
