"""A huge number of classes: randomized response and RAPPOR in bounded memory.

numpy reports its allocations to tracemalloc, so the traced peak of a call is
the memory it needs. A dense (n, K) float64 array at n = K = 100_000 would be
80 GB; randomized response must stay O(n), RAPPOR's dense output is n * K
bytes and its sparse output about 5 bytes per one.
"""

import math
import tracemalloc

import numpy as np
import pytest
from _law_checks import assert_follows

from sklearn_labeldp.mechanisms import randomized_response, rappor, rr_with_prior

N = K = 100_000
MB = 1e6


def traced_peak(function):
    """Run ``function()`` and return its result and peak traced bytes."""
    tracemalloc.start()
    try:
        result = function()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, peak


@pytest.mark.parametrize(
    "sampler",
    [
        lambda y, eps, rs: randomized_response(y, epsilon=eps, n_classes=K, random_state=rs),
        lambda y, eps, rs: rr_with_prior(y, epsilon=eps, n_classes=K, random_state=rs),
    ],
    ids=["randomized_response", "rr_with_prior-no-prior"],
)
def test_randomized_response_with_1e5_classes_needs_o_n_memory(sampler):
    y = np.arange(N)  # every label once
    epsilon = 12.0  # keeps about 62% of the labels
    out, peak = traced_peak(lambda: sampler(y, epsilon, 0))
    assert peak < 50 * MB  # a dense (n, K) float64 array: 80 GB
    assert peak < 100 * N  # in fact about 17 bytes per example
    keep = 1 / (1 + (K - 1) * math.exp(-epsilon))
    kept = out == y
    assert abs(kept.sum() - N * keep) < 5 * math.sqrt(N * keep * (1 - keep))
    # The other outputs are uniform over the K - 1 other labels: their offsets
    # (out - y) mod K in 1..K-1, cut into 20 equal bins of 4999 or 5000 values.
    offsets = (out[~kept] - y[~kept]) % K
    assert offsets.min() >= 1
    bins = (offsets - 1) * 20 // (K - 1)
    widths = np.bincount(np.arange(K - 1) * 20 // (K - 1))
    assert_follows(bins, widths / (K - 1))


def test_rappor_with_1e5_classes_needs_the_output_and_a_chunk():
    n = 1000
    y = np.arange(n) * 97
    dense, peak = traced_peak(lambda: rappor(y, epsilon=1.0, n_classes=K, random_state=0))
    assert dense.nbytes == n * K
    assert peak < n * K + 16 * MB  # float64 uniforms for all bits: 8 * n * K
    # At eps = 8 about 1.8% of the bits are ones: the CSR output (5 bytes per
    # one) is a tenth of the dense one; the peak adds one chunk's temporaries
    # (about 2**18 ones, some 45 bytes each).
    sparse, peak = traced_peak(
        lambda: rappor(y, epsilon=8.0, n_classes=K, random_state=0, sparse_output=True)
    )
    q_minus = 1 / (1 + math.exp(4.0))
    assert abs(sparse.nnz - n * K * q_minus) < 0.05 * n * K * q_minus
    assert peak < 5 * sparse.nnz + 16 * MB


def test_rappor_with_1e5_examples_and_1e5_classes_in_bounded_memory():
    # n = K = 1e5: a dense output alone would take 10 GB. At eps = 16 each vector
    # holds its label's bit and about K / (1 + e^8) = 34 others, so the CSR output
    # is some 20 MB and the peak is that plus one chunk's temporaries.
    n = 100_000
    y = np.arange(n) % K
    sparse, peak = traced_peak(
        lambda: rappor(y, epsilon=16.0, n_classes=K, random_state=0, sparse_output=True)
    )
    assert sparse.shape == (n, K)
    expected = n * (1 / (1 + math.exp(-8.0)) + (K - 1) / (1 + math.exp(8.0)))
    assert abs(sparse.nnz - expected) < 0.02 * expected
    assert peak < 5 * sparse.nnz + 16 * MB < n * K / 100
