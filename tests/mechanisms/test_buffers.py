"""The mechanisms' reused work arrays: same results, and no fresh temporaries per chunk.

Inside a Dask worker (distributed sets ``MALLOC_TRIM_THRESHOLD_=65536``)
glibc serves every allocation above 128 KiB with a fresh ``mmap`` whose pages
are faulted in on first touch, so a temporary allocated per chunk shows up as
page faults that grow with the number of chunks. The last test counts them
in a process started with that setting.
"""

import json
import os
import platform
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from sklearn_labeldp.mechanisms._bit_select import nth_member
from sklearn_labeldp.mechanisms._buffers import WorkBuffers, label_positions


def test_buffers_are_reused_grown_and_typed():
    buffers = WorkBuffers()
    a = buffers.get("x", (4, 3))
    a[...] = 1.0
    b = buffers.get("x", 5)
    assert np.shares_memory(a, b) and b.shape == (5,)
    c = buffers.get("x", (5, 3))  # larger: a new array
    assert not np.shares_memory(a, c) and c.flags.c_contiguous
    d = buffers.get("x", 7, np.int64)  # another dtype: a new array
    assert d.dtype == np.int64 and not np.shares_memory(c, d)
    assert not np.shares_memory(buffers.get("y", 3), buffers.get("x", 3, np.int64))
    assert_array_equal(buffers.arange(4), np.arange(4))
    assert_array_equal(buffers.row_offsets(3, 7), [0, 7, 14])
    assert_array_equal(buffers.row_offsets(2, 5), [0, 5])  # one array per column count
    y = np.array([1, 0, 2, 2])
    z = np.arange(5 * 3).reshape(5, 3)
    assert_array_equal(z.reshape(-1)[label_positions(buffers, y, 3, first_row=1)],
                       z[np.arange(1, 5), y])


@pytest.mark.parametrize("n_classes", [5, 53, 64, 100, 128])
def test_nth_member_with_shared_buffers_matches_fresh_ones(n_classes):
    # One WorkBuffers across calls of decreasing and increasing sizes (the
    # chunks of a call, then the next call) gives the answers of fresh ones,
    # which are checked against a cumulative count.
    rng = np.random.default_rng(n_classes)
    buffers = WorkBuffers()
    for n_rows in (700, 300, 900):
        mask = rng.random((n_rows, n_classes)) < 0.3
        mask[:, rng.integers(n_classes)] = True
        exclude = np.where(rng.random(n_rows) < 0.5, -1, np.argmax(mask, axis=1))
        members = mask.copy()
        rows = np.flatnonzero(exclude >= 0)
        members[rows, exclude[rows]] = False
        size = members.sum(axis=1)
        keep = size > 0
        mask, exclude, members, size = mask[keep], exclude[keep], members[keep], size[keep]
        n = (rng.random(size.shape[0]) * size).astype(np.int64)
        expected = np.argmax(np.cumsum(members, axis=1) > n[:, None], axis=1)
        assert_array_equal(nth_member(mask, n, exclude, buffers), expected)
        assert_array_equal(nth_member(mask, n, exclude), expected)


_FAULT_GROWTH = textwrap.dedent("""
    import json, resource
    import numpy as np
    from sklearn_labeldp.mechanisms import randomized_response, rappor, rr_with_prior

    K = 10
    calls = {
        "randomized_response": lambda y, p: randomized_response(
            y, epsilon=1.0, n_classes=K, random_state=0),
        "rr_with_prior": lambda y, p: rr_with_prior(y, p, epsilon=1.0, random_state=0),
        "rappor": lambda y, p: rappor(y, epsilon=1.0, n_classes=K, random_state=0),
    }

    def faults(call, n):
        rng = np.random.default_rng(0)
        y, prior = rng.integers(K, size=n), rng.random((n, K))
        call(y, prior)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        call(y, prior)
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    growth = {}
    for name, call in calls.items():
        growth[name] = (faults(call, 500_000) - faults(call, 100_000)) * 4096 / 400_000
    print(json.dumps(growth))
""")


@pytest.mark.skipif(
    sys.platform != "linux" or platform.libc_ver()[0] != "glibc",
    reason="MALLOC_TRIM_THRESHOLD_ is glibc's",
)
def test_no_fresh_temporaries_per_chunk_under_distributed_malloc_setting():
    # From 1e5 to 5e5 labels (K = 10: 4 to 19 chunks of rr_with_prior, 2 to 10
    # of RAPPOR), the pages faulted in per extra label may not exceed 1.5x the
    # bytes per label that the call must write anyway (its output and O(n)
    # arrays: RR 9, RRWithPrior 25 for k, threshold, tie flags and output,
    # RAPPOR 10), plus 4. Allocating the chunks' temporaries afresh faulted in
    # 25, 420 and 82 bytes per label.
    env = {key: value for key, value in os.environ.items() if not key.startswith("MALLOC_")}
    env.update(MALLOC_TRIM_THRESHOLD_="65536", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    result = subprocess.run([sys.executable, "-c", _FAULT_GROWTH], env=env, check=True,
                            capture_output=True, text=True, timeout=300)
    growth = json.loads(result.stdout.strip().splitlines()[-1])
    written = {"randomized_response": 9, "rr_with_prior": 25, "rappor": 10}
    for name, bytes_per_label in growth.items():
        assert bytes_per_label <= 1.5 * written[name] + 4, (name, growth)
