"""PATE vote aggregators (LNMax, GNMax, Confident-GNMax), their spends and calibration.

Each aggregator maps teacher vote histograms to labels. Under label DP a label
change alters one teacher's training set, hence at most that teacher's vote on
each query: a histogram moves by one vote between two bins (L1 sensitivity 2,
L2 sensitivity ``sqrt(2)``) and its maximum by at most 1. The outputs are
argmaxes (discrete), so no lattice rounding of the floating-point noise is
needed: only the index of the largest noisy bin leaves the function.

The Gaussian aggregators are accounted exactly. Over ``Q`` queries the
histograms (and, for Confident-GNMax, their maxima) form one vector to which
independent Gaussian noise is added; a label change moves it by at most
``mu`` noise standard deviations in L2 norm, with ``mu^2 = 2 Q / sigma^2``
(GNMax) or ``Q / sigma1^2 + 2 Q / sigma2^2`` (Confident-GNMax, whose answer
to a query left unanswered is computed and discarded: post-processing). Such
a mechanism is dominated by the pair ``N(0, 1)``, ``N(mu, 1)`` whatever the
data, so its epsilon at ``delta`` is the Gaussian's exact privacy profile
(Balle and Wang 2018), which is also the limit of its privacy loss
distribution (the record is described by ``("gaussian", mu)``, so that
:meth:`~sklearn_labeldp.accounting.BudgetAccountant.total` composes it with
other spends exactly), and the noise is calibrated by the same profile.
"""

import math

import numpy as np

from ..accounting import PrivacySpend, calibrate_gaussian_sigma
from ..utils import check_finite, check_generator, check_int, check_positive, check_unit_interval

__all__ = [
    "confident_gnmax",
    "confident_gnmax_sigmas",
    "confident_gnmax_spend",
    "gnmax",
    "gnmax_sigma",
    "gnmax_spend",
    "lnmax",
    "lnmax_gamma",
    "lnmax_spend",
]


def _check_votes(votes):
    votes = np.asarray(votes)
    if votes.ndim != 2 or votes.shape[1] < 2:
        raise ValueError(
            f"votes must be a 2-d array (n_queries, n_classes >= 2); got shape {votes.shape}."
        )
    if votes.dtype.kind not in "iuf" or votes.dtype == np.bool_:
        raise TypeError(f"votes must hold numeric counts; got dtype {votes.dtype}.")
    votes = votes.astype(np.float64)
    if not np.all(np.isfinite(votes)) or np.any(votes < 0) or np.any(votes != np.rint(votes)):
        raise ValueError("votes must be finite, nonnegative integer counts.")
    return votes


def _noisy_argmax(votes, noise):
    noise += votes
    return np.argmax(noise, axis=1)


def lnmax(votes, *, gamma, random_state=None):
    """LNMax: the argmax of the vote histogram plus iid Laplace(``1 / gamma``) noise.

    Each query is ``2 gamma``-DP for the label of any one example (L1
    sensitivity 2); over ``Q`` queries the pure epsilons add up to
    ``2 gamma Q`` (:func:`lnmax_spend`).

    Parameters
    ----------
    votes : array-like of shape (n_queries, n_classes)
        Nonnegative integer vote counts.
    gamma : float
        Inverse Laplace scale, finite and > 0.
    random_state : None, "secure", int or numpy.random.Generator, default=None
        Source of the noise: fresh entropy for ``None`` and ``"secure"``; an
        int or ``Generator`` is a replay key, as secret as the labels (see
        :ref:`randomness`).

    Returns
    -------
    ndarray of shape (n_queries,), int64
        The noisy plurality label of each query.

    References
    ----------
    .. [1] N. Papernot, M. Abadi, U. Erlingsson, I. Goodfellow, K. Talwar.
       Semi-supervised knowledge transfer for deep learning from private
       training data. ICLR 2017.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import lnmax
    >>> lnmax([[9, 1, 0], [0, 2, 8]], gamma=100.0, random_state=0)
    array([0, 2])
    """
    votes = _check_votes(votes)
    gamma = check_positive(gamma, "gamma")
    rng = check_generator(random_state)
    return _noisy_argmax(votes, rng.laplace(0.0, 1.0 / gamma, size=votes.shape))


def gnmax(votes, *, sigma, random_state=None):
    """GNMax: the argmax of the vote histogram plus iid ``N(0, sigma^2)`` noise.

    A Gaussian mechanism with L2 sensitivity ``sqrt(2)`` (a label change moves
    one vote between two bins): ``sqrt(2) / sigma`` noise stds per query,
    ``rho = 1 / sigma^2``-zCDP, and the argmax is post-processing
    (:func:`gnmax_spend` accounts ``Q`` queries exactly).

    Parameters
    ----------
    votes : array-like of shape (n_queries, n_classes)
        Nonnegative integer vote counts.
    sigma : float
        Noise standard deviation, finite and > 0.
    random_state : None, "secure", int or numpy.random.Generator, default=None
        As in :func:`lnmax`.

    Returns
    -------
    ndarray of shape (n_queries,), int64

    References
    ----------
    .. [1] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar,
       U. Erlingsson. Scalable private learning with PATE. ICLR 2018.
    .. [2] M. Bun, T. Steinke. Concentrated differential privacy:
       simplifications, extensions, and lower bounds. TCC 2016.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import gnmax
    >>> gnmax([[9, 1, 0], [0, 2, 8]], sigma=0.01, random_state=0)
    array([0, 2])
    """
    votes = _check_votes(votes)
    sigma = check_positive(sigma, "sigma")
    rng = check_generator(random_state)
    return _noisy_argmax(votes, rng.normal(0.0, sigma, size=votes.shape))


def confident_gnmax(votes, *, threshold, sigma1, sigma2, random_state=None):
    """Confident-GNMax: answer with GNMax only where the teachers agree enough.

    A query is answered when ``max_j n_j + N(0, sigma1^2) >= threshold``
    (a Gaussian mechanism on the maximum, sensitivity 1:
    ``rho = 1 / (2 sigma1^2)``, spent on every query), and then labelled by
    :func:`gnmax` with ``sigma2`` (``rho = 1 / sigma2^2``). The bound of
    :func:`confident_gnmax_spend` assumes any query may be answered, so it
    does not depend on the data.

    Parameters
    ----------
    votes : array-like of shape (n_queries, n_classes)
        Nonnegative integer vote counts.
    threshold : float
        Finite vote threshold of the selection step.
    sigma1 : float
        Noise std of the selection step, finite and > 0.
    sigma2 : float
        Noise std of the answer, finite and > 0.
    random_state : None, "secure", int or numpy.random.Generator, default=None
        As in :func:`lnmax`.

    Returns
    -------
    ndarray of shape (n_queries,), int64
        The label of each answered query, ``-1`` for the others
        (scikit-learn's mark of an unlabeled example).

    References
    ----------
    .. [1] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar,
       U. Erlingsson. Scalable private learning with PATE. ICLR 2018.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import confident_gnmax
    >>> confident_gnmax([[9, 1, 0], [3, 3, 4]], threshold=7, sigma1=0.01, sigma2=0.01,
    ...                 random_state=0)
    array([ 0, -1])
    """
    votes = _check_votes(votes)
    check_finite(threshold, "threshold")
    sigma1 = check_positive(sigma1, "sigma1")
    sigma2 = check_positive(sigma2, "sigma2")
    rng = check_generator(random_state)
    confident = votes.max(axis=1) + rng.normal(0.0, sigma1, size=votes.shape[0]) >= threshold
    labels = np.full(votes.shape[0], -1, dtype=np.int64)
    answered = votes[confident]
    labels[confident] = _noisy_argmax(answered, rng.normal(0.0, sigma2, size=answered.shape))
    return labels


def lnmax_spend(gamma, n_queries):
    """The pure-DP spend of ``n_queries`` LNMax answers: ``epsilon = 2 gamma Q``.

    Parameters
    ----------
    gamma : float
        Inverse Laplace scale, > 0.
    n_queries : int
        Number of queries, >= 1.

    Returns
    -------
    PrivacySpend

    References
    ----------
    .. [1] N. Papernot, M. Abadi, U. Erlingsson, I. Goodfellow, K. Talwar.
       Semi-supervised knowledge transfer for deep learning from private
       training data. ICLR 2017.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import lnmax_spend
    >>> lnmax_spend(0.05, 10).epsilon
    1.0
    """
    gamma = check_positive(gamma, "gamma")
    n_queries = check_int(n_queries, "n_queries", minimum=1)
    return PrivacySpend.leaf("LNMax", 2.0 * gamma * n_queries, gamma=gamma, n_queries=n_queries)


def _gaussian_spend(mechanism, mu_squared, delta, **params):
    """The exact leaf of a Gaussian mechanism with squared sensitivity ``mu_squared`` noise stds.

    :meth:`~sklearn_labeldp.accounting.PrivacySpend.gaussian` with ``rho =
    mu_squared / 2`` (zCDP, Bun and Steinke 2016) exactly as the aggregators'
    spends state it.
    """
    return PrivacySpend.gaussian(math.sqrt(mu_squared), delta, mechanism=mechanism,
                                 rho=mu_squared / 2.0, **params)


def gnmax_spend(sigma, n_queries, delta):
    """The exact spend of ``n_queries`` GNMax answers: one Gaussian of sensitivity ``sqrt(2 Q)``.

    A label change moves one teacher's vote on every query: each histogram by
    ``sqrt(2)`` in L2 norm (one vote between two bins, Papernot et al. 2018),
    the ``Q`` histograms together by ``sqrt(2 Q)``. The epsilon at ``delta``
    is the Gaussian's exact privacy profile (Balle and Wang 2018), equal to
    the privacy loss distribution's composition of the ``Q`` answers; the
    zCDP ``rho = Q / sigma^2`` is recorded beside it.

    Parameters
    ----------
    sigma : float
        Noise std, > 0.
    n_queries : int
        Number of queries, >= 1.
    delta : float
        The delta in (0, 1) at which epsilon is reported.

    Returns
    -------
    PrivacySpend
        A leaf described by ``("gaussian", sqrt(2 Q) / sigma)`` (composed
        exactly by :meth:`~sklearn_labeldp.accounting.BudgetAccountant.total`
        with a ``slack``) and ``params["rho"]``.

    References
    ----------
    .. [1] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar,
       U. Erlingsson. Scalable private learning with PATE. ICLR 2018.
    .. [2] M. Bun, T. Steinke. Concentrated differential privacy:
       simplifications, extensions, and lower bounds. TCC 2016.
    .. [3] B. Balle, Y.-X. Wang. Improving the Gaussian mechanism for
       differential privacy: analytical calibration and optimal denoising.
       ICML 2018.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import gnmax_spend
    >>> spend = gnmax_spend(10.0, 25, 1e-5)
    >>> spend.rho, round(spend.description.value, 6), round(spend.epsilon, 3)
    (0.25, 0.707107, 2.943)
    """
    sigma = check_positive(sigma, "sigma")
    n_queries = check_int(n_queries, "n_queries", minimum=1)
    delta = check_unit_interval(delta, "delta")
    return _gaussian_spend(
        "GNMax", 2.0 * n_queries / sigma**2, delta, sigma=sigma, n_queries=n_queries
    )


def confident_gnmax_spend(sigma1, sigma2, n_queries, delta):
    """Data-independent exact spend of Confident-GNMax, every query counted as answered.

    The selection releases each query's top vote count (sensitivity 1) with
    noise ``sigma1``; computing the GNMax answer (sensitivity ``sqrt(2)``,
    noise ``sigma2``) of every query and discarding the unselected ones gives
    the same output, so the whole is a post-processing of one Gaussian
    mechanism of sensitivity ``mu = sqrt(Q / sigma1^2 + 2 Q / sigma2^2)``
    noise stds, accounted by its exact privacy profile (Balle and Wang 2018);
    ``rho = mu^2 / 2 = Q / (2 sigma1^2) + Q / sigma2^2`` is recorded beside.

    Parameters
    ----------
    sigma1 : float
        Selection noise std, > 0.
    sigma2 : float
        Answer noise std, > 0.
    n_queries : int
        Number of queries, >= 1.
    delta : float
        The delta in (0, 1) at which epsilon is reported.

    Returns
    -------
    PrivacySpend
        A leaf described by ``("gaussian", mu)``, with ``params["rho"]``.

    References
    ----------
    .. [1] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar,
       U. Erlingsson. Scalable private learning with PATE. ICLR 2018.
    .. [2] M. Bun, T. Steinke. Concentrated differential privacy:
       simplifications, extensions, and lower bounds. TCC 2016.
    .. [3] B. Balle, Y.-X. Wang. Improving the Gaussian mechanism for
       differential privacy: analytical calibration and optimal denoising.
       ICML 2018.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import confident_gnmax_spend
    >>> confident_gnmax_spend(10.0, 10.0, 100, 1e-5).rho
    1.5
    """
    sigma1 = check_positive(sigma1, "sigma1")
    sigma2 = check_positive(sigma2, "sigma2")
    n_queries = check_int(n_queries, "n_queries", minimum=1)
    delta = check_unit_interval(delta, "delta")
    mu_squared = n_queries / sigma1**2 + 2.0 * n_queries / sigma2**2
    return _gaussian_spend(
        "Confident-GNMax", mu_squared, delta, sigma1=sigma1, sigma2=sigma2, n_queries=n_queries
    )


def lnmax_gamma(epsilon, n_queries):
    """The largest LNMax ``gamma`` whose ``n_queries`` answers are ``epsilon``-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, finite and > 0.
    n_queries : int
        Number of queries, >= 1.

    Returns
    -------
    float
        ``epsilon / (2 Q)``, rounded down so that :func:`lnmax_spend` never
        exceeds ``epsilon``.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import lnmax_gamma
    >>> lnmax_gamma(1.0, 10)
    0.05
    """
    epsilon = check_positive(epsilon, "epsilon")
    n_queries = check_int(n_queries, "n_queries", minimum=1)
    gamma = epsilon / (2.0 * n_queries)
    while 2.0 * gamma * n_queries > epsilon:
        gamma = math.nextafter(gamma, 0.0)
    return gamma


def gnmax_sigma(epsilon, delta, n_queries):
    """The smallest GNMax ``sigma`` whose ``n_queries`` answers are (eps, delta)-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, finite and > 0.
    delta : float
        Target delta in (0, 1).
    n_queries : int
        Number of queries, >= 1.

    Returns
    -------
    float
        ``sqrt(2 Q) / mu`` for the largest ``mu`` whose Gaussian is
        (epsilon, delta)-DP by its exact privacy profile (Balle and Wang
        2018), rounded up so that :func:`gnmax_spend` never exceeds
        ``epsilon``.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import gnmax_sigma, gnmax_spend
    >>> sigma = gnmax_sigma(2.0, 1e-5, 100)
    >>> gnmax_spend(sigma, 100, 1e-5).epsilon <= 2.0
    True
    """
    n_queries = check_int(n_queries, "n_queries", minimum=1)
    return calibrate_gaussian_sigma(epsilon, delta, 2.0 * n_queries,
                                    lambda s: gnmax_spend(s, n_queries, delta))


def confident_gnmax_sigmas(epsilon, delta, n_queries, sigma_ratio):
    """Calibrate Confident-GNMax's ``(sigma1, sigma2)`` with ``sigma1 = sigma_ratio * sigma2``.

    The mechanism's sensitivity is ``mu = sqrt(Q (2 + 1 / r^2)) / sigma2``
    noise stds for ``r = sigma_ratio`` (see :func:`confident_gnmax_spend`), so
    the largest ``mu`` admissible at (epsilon, delta) by the Gaussian's exact
    privacy profile (Balle and Wang 2018) fixes ``sigma2``.

    Parameters
    ----------
    epsilon : float
        Target epsilon, finite and > 0.
    delta : float
        Target delta in (0, 1).
    n_queries : int
        Number of queries, >= 1.
    sigma_ratio : float
        Public ratio ``sigma1 / sigma2``, finite and > 0.

    Returns
    -------
    sigma1, sigma2 : float
        The spend of :func:`confident_gnmax_spend` at these never exceeds
        ``epsilon``.

    References
    ----------
    .. [1] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar,
       U. Erlingsson. Scalable private learning with PATE. ICLR 2018.

    Examples
    --------
    >>> from sklearn_labeldp.mechanisms import confident_gnmax_sigmas
    >>> s1, s2 = confident_gnmax_sigmas(2.0, 1e-5, 100, 2.0)
    >>> round(s1 / s2, 6)
    2.0
    """
    n_queries = check_int(n_queries, "n_queries", minimum=1)
    ratio = check_positive(sigma_ratio, "sigma_ratio")
    sigma2 = calibrate_gaussian_sigma(
        epsilon,
        delta,
        n_queries * (2.0 + 1.0 / ratio**2),
        lambda s: confident_gnmax_spend(ratio * s, s, n_queries, delta),
    )
    return ratio * sigma2, sigma2
