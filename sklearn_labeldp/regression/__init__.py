"""Label-DP regression: any regressor on privatised real labels.

The randomizers themselves (RR-on-Bins, the optimal unbiased randomizer,
Laplace, Gaussian and staircase noise) are in :mod:`sklearn_labeldp.mechanisms`;
:class:`~sklearn_labeldp.linear_model.DPLeastSquaresRegressor` is the linear
model from noisy sufficient statistics.
"""

from ._noisy_labels import NoisyLabelRegressor

__all__ = ["NoisyLabelRegressor"]
