"""The fitted ``mechanism_params_``: one key scheme across estimators.

Every label-DP estimator records the public settings its mechanism ran with
in ``mechanism_params_``, a :class:`MechanismParams` (a ``dict``). One name
per quantity, across estimators:

``release_epsilon``
    The epsilon of one release: a stage of randomized response with a prior,
    the label randomizer after a regressor's prior, one one-vs-rest problem of
    objective or output perturbation.
``noise_scale``
    The scale of the noise on a released quantity, in its units: the
    standard deviation of Gaussian noise, the scale ``b`` of Laplace noise
    (ALIBI's one-hot vector, Laplace or Gaussian label noise, GNMax's and
    Confident-GNMax's answers, objective and output perturbation's norm).
    ``threshold_noise_scale``: Confident-GNMax's selection step.
``noise_scales``
    The same, per released statistic (a dict: DP least squares, DP-Newton,
    DP-FC, DP-SGD and DP-Adam of the linear models).
``noise_multiplier``
    The noise's standard deviation over the sensitivity it is calibrated to
    (DP-SGD, DP least squares).
``gaussian_mu``, ``example_gaussian_mu``
    A Gaussian mechanism's sensitivity in noise standard deviations, for a
    label change and (under ``privacy="full"``) for adding or removing an
    example; the record's description is ``("gaussian", gaussian_mu)``.

Settings that are parameters keep the parameter's name (``max_grad_norm``,
``threshold``, ``n_neighbors``, ...); the neighbouring relation of the
calibration is the estimator's ``privacy`` parameter where it has one, and a
label change otherwise. The keys renamed in sklearn-labeldp 0.1 (see the
changelog) are still read, with a :class:`FutureWarning`, for one release.
"""

import warnings

__all__ = ["RENAMED_KEYS", "MechanismParams"]

# Old key -> new key, readable with a FutureWarning until sklearn-labeldp 0.2.
RENAMED_KEYS = {
    "stage_epsilon": "release_epsilon",
    "mechanism_epsilon": "release_epsilon",
    "epsilon_per_problem": "release_epsilon",
    "scale": "noise_scale",
    "noise_std": "noise_scale",
    "sigma": "noise_scale",
    "sigma2": "noise_scale",
    "sigma1": "threshold_noise_scale",
    "noise_stds": "noise_scales",
    "gaussian": "gaussian_mu",
    "example_gaussian": "example_gaussian_mu",
}


class MechanismParams(dict):
    """A fitted ``mechanism_params_``: a ``dict`` that still reads the renamed keys.

    Looking up a key renamed in sklearn-labeldp 0.1 (:data:`RENAMED_KEYS`)
    returns the value under its new name with a :class:`FutureWarning`;
    everything else is a plain ``dict``.

    Examples
    --------
    >>> import warnings
    >>> from sklearn_labeldp.utils._mechanism_params import MechanismParams
    >>> params = MechanismParams(release_epsilon=1.0)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     params["stage_epsilon"], caught[0].category.__name__
    (1.0, 'FutureWarning')
    """

    def _renamed(self, key):
        new = RENAMED_KEYS.get(key) if isinstance(key, str) else None
        if new is None or new not in self:
            return None
        warnings.warn(
            f"mechanism_params_[{key!r}] is now mechanism_params_[{new!r}]; the old name "
            "is read until sklearn-labeldp 0.2.", FutureWarning, stacklevel=3)
        return new

    def __missing__(self, key):
        new = self._renamed(key)
        if new is None:
            raise KeyError(key)
        return self[new]

    def get(self, key, default=None):
        """``dict.get``, reading a renamed key under its new name (with a warning)."""
        if key in self:
            return self[key]
        new = self._renamed(key)
        return default if new is None else self[new]
