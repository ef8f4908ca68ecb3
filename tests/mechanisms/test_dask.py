"""The label mechanisms on dask arrays: lazy, one spawned stream per block, same laws.

Each block of a dask ``y`` is drawn by the numpy mechanism with the generator
on the block's child of the root SeedSequence of ``random_state``; the tests
rebuild those generators independently (with ``SeedSequence.spawn``) and also
check the output laws on the computed arrays with the exact distributions.
"""

import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from _law_checks import assert_follows
from numpy.testing import assert_array_equal
from scipy.stats import kstest

from sklearn_labeldp.mechanisms import (
    gaussian_one_hot,
    laplace_one_hot,
    optimal_top_k,
    randomized_response,
    randomized_response_distribution,
    rappor,
    rappor_distribution,
    rr_with_prior,
    rr_with_prior_distribution,
)
from sklearn_labeldp.mechanisms._dask import _block_seed
from sklearn_labeldp.utils import is_dask

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

K = 4
PRIOR_ROW = [0.5, 0.3, 0.15, 0.05]  # k* = 2 at eps = 1


@pytest.fixture(autouse=True)
def synchronous_scheduler():
    # One block at a time in this process: deterministic and light on 2 cores.
    with dask.config.set(scheduler="synchronous"):
        yield


def prior_like(y):
    """A dask prior chunked like ``y`` along rows."""
    return da.from_array(np.tile(PRIOR_ROW, (y.shape[0], 1)), chunks=(y.chunks[0], K))


# name -> (call(y, random_state), numpy call(y block, prior block, rng), dtype, width)
MECHANISMS = {
    "randomized_response": (
        lambda y, rs: randomized_response(y, epsilon=1.0, n_classes=K, random_state=rs),
        lambda y, p, rng: randomized_response(y, epsilon=1.0, n_classes=K, random_state=rng),
        np.int64,
        None,
    ),
    "rr_with_prior": (
        lambda y, rs: rr_with_prior(y, prior_like(y), epsilon=1.0, random_state=rs),
        lambda y, p, rng: rr_with_prior(y, p, epsilon=1.0, random_state=rng),
        np.int64,
        None,
    ),
    "rr_with_prior_uniform": (
        lambda y, rs: rr_with_prior(y, epsilon=1.0, n_classes=K, random_state=rs),
        lambda y, p, rng: rr_with_prior(y, epsilon=1.0, n_classes=K, random_state=rng),
        np.int64,
        None,
    ),
    "rappor": (
        lambda y, rs: rappor(y, epsilon=1.0, n_classes=K, random_state=rs),
        lambda y, p, rng: rappor(y, epsilon=1.0, n_classes=K, random_state=rng),
        np.uint8,
        K,
    ),
    "laplace_one_hot": (
        lambda y, rs: laplace_one_hot(y, epsilon=1.0, n_classes=K, random_state=rs),
        lambda y, p, rng: laplace_one_hot(y, epsilon=1.0, n_classes=K, random_state=rng),
        np.float64,
        K,
    ),
    "gaussian_one_hot": (
        lambda y, rs: gaussian_one_hot(y, sigma=1.0, n_classes=K, random_state=rs),
        lambda y, p, rng: gaussian_one_hot(y, sigma=1.0, n_classes=K, random_state=rng),
        np.float64,
        K,
    ),
}
parametrize_mechanisms = pytest.mark.parametrize("name", list(MECHANISMS))
CHUNKS = (300, 300, 250, 150)


def labels(chunks=CHUNKS, seed=0):
    n = sum(chunks)
    return da.from_array(np.random.default_rng(seed).integers(K, size=n), chunks=(chunks,))


class Counter:
    """A block function that counts how many blocks were computed."""

    def __init__(self):
        self.calls = 0

    def __call__(self, block):
        self.calls += 1
        return block


# --- shape, dtype, laziness ---------------------------------------------------


@parametrize_mechanisms
def test_dask_in_dask_out_with_the_chunks_and_dtype(name):
    call, _, dtype, width = MECHANISMS[name]
    out = call(labels(), 0)
    assert isinstance(out, da.Array)
    expected_chunks = (CHUNKS,) if width is None else (CHUNKS, (width,))
    assert out.chunks == expected_chunks
    assert out.dtype == dtype
    computed = out.compute()
    assert computed.dtype == dtype
    assert computed.shape == out.shape


@parametrize_mechanisms
def test_nothing_is_computed_before_compute(name):
    call = MECHANISMS[name][0]
    counter = Counter()
    y = labels().map_blocks(counter, meta=np.empty(0, np.int64))
    out = call(y, 0)
    assert counter.calls == 0
    out.compute()
    assert counter.calls == len(CHUNKS)


def test_a_dask_prior_is_not_computed_before_compute():
    counter = Counter()
    y = labels()
    prior = prior_like(y).map_blocks(counter, meta=np.empty((0, K)))
    out = rr_with_prior(y, prior, epsilon=1.0, random_state=0)
    assert counter.calls == 0
    out.compute()
    assert counter.calls == len(CHUNKS)


# --- streams: one spawned child per block -------------------------------------


@parametrize_mechanisms
def test_block_i_uses_child_i_of_the_seed(name):
    call, numpy_call, _, _ = MECHANISMS[name]
    y = labels()
    out = call(y, 123).compute()
    children = np.random.SeedSequence(123).spawn(len(CHUNKS))
    prior = np.tile(PRIOR_ROW, (y.shape[0], 1))
    y_np = y.compute()
    start = 0
    for size, child in zip(CHUNKS, children, strict=True):
        rows = slice(start, start + size)
        expected = numpy_call(y_np[rows], prior[rows], np.random.Generator(np.random.PCG64(child)))
        assert_array_equal(out[rows], expected)
        start += size


def test_block_seed_is_the_spawned_child():
    for root in (np.random.SeedSequence(7), np.random.SeedSequence()):
        spawned = np.random.SeedSequence(root.entropy).spawn(5)
        for i, child in enumerate(spawned):
            assert_array_equal(_block_seed(root, i).generate_state(8), child.generate_state(8))


@parametrize_mechanisms
def test_same_seed_and_chunking_replays_another_seed_differs(name):
    call = MECHANISMS[name][0]
    first, again = call(labels(), 5), call(labels(), 5)
    # Graph names are random, never a hash of the seed.
    assert first.name != again.name
    assert_array_equal(first.compute(), again.compute())
    assert not np.array_equal(first.compute(), call(labels(), 6).compute())


@parametrize_mechanisms
def test_blocks_with_identical_labels_get_different_draws(name):
    call = MECHANISMS[name][0]
    block = np.random.default_rng(1).integers(K, size=500)
    y = da.from_array(np.concatenate([block, block]), chunks=500)
    out = call(y, 0).compute()
    assert not np.array_equal(out[:500], out[500:])


def test_threads_give_the_same_output_as_one_thread():
    out = rappor(labels(), epsilon=1.0, n_classes=K, random_state=3)
    assert_array_equal(out.compute(scheduler="threads"), out.compute())


def test_a_generator_random_state_advances_and_keeps_its_bit_generator():
    randomgen = pytest.importorskip("randomgen")
    rng = np.random.Generator(randomgen.AESCounter(np.random.SeedSequence(9)))
    copy = np.random.Generator(randomgen.AESCounter(np.random.SeedSequence(9)))
    y = labels()
    out = randomized_response(y, epsilon=1.0, n_classes=K, random_state=rng).compute()
    # The root is 256 bits drawn from the caller's generator; children are AES too.
    root = np.random.SeedSequence(copy.integers(2**32, size=8, dtype=np.uint64))
    assert rng.integers(2**62) == copy.integers(2**62)
    y_np, start = y.compute(), 0
    for size, child in zip(CHUNKS, root.spawn(len(CHUNKS)), strict=True):
        block_rng = np.random.Generator(randomgen.AESCounter(child))
        expected = randomized_response(
            y_np[start : start + size], epsilon=1.0, n_classes=K, random_state=block_rng
        )
        assert_array_equal(out[start : start + size], expected)
        start += size


def test_secure_random_state_runs_and_differs_between_calls():
    pytest.importorskip("randomgen")
    y = labels()
    first = rr_with_prior(y, prior_like(y), epsilon=1.0, random_state="secure").compute()
    second = rr_with_prior(y, prior_like(y), epsilon=1.0, random_state="secure").compute()
    assert not np.array_equal(first, second)


# --- inputs --------------------------------------------------------------------


def test_numpy_prior_with_dask_labels_and_dask_prior_with_numpy_labels():
    y = labels()
    prior = np.tile(PRIOR_ROW, (y.shape[0], 1))
    expected = rr_with_prior(y, prior_like(y), epsilon=1.0, random_state=4).compute()
    from_numpy_prior = rr_with_prior(y, prior, epsilon=1.0, random_state=4)
    from_numpy_labels = rr_with_prior(y.compute(), prior_like(y), epsilon=1.0, random_state=4)
    for out in (from_numpy_prior, from_numpy_labels):
        assert isinstance(out, da.Array) and out.chunks == (CHUNKS,)
        assert_array_equal(out.compute(), expected)


def test_prior_split_over_columns_is_joined_per_block():
    y = labels()
    out = rr_with_prior(y, prior_like(y).rechunk({1: 2}), epsilon=1.0, random_state=4)
    expected = rr_with_prior(y, prior_like(y), epsilon=1.0, random_state=4)
    assert_array_equal(out.compute(), expected.compute())


def test_return_k_gives_two_dask_arrays():
    y = labels()
    out, k = rr_with_prior(y, prior_like(y), epsilon=1.0, random_state=2, return_k=True)
    assert isinstance(out, da.Array) and isinstance(k, da.Array)
    assert out.chunks == k.chunks == (CHUNKS,)
    expected = rr_with_prior(y, prior_like(y), epsilon=1.0, random_state=2).compute()
    out, k = dask.compute(out, k)
    assert_array_equal(out, expected)
    assert_array_equal(k, optimal_top_k(np.tile(PRIOR_ROW, (y.shape[0], 1)), epsilon=1.0))


def test_unknown_chunk_sizes_are_fine_without_a_prior():
    y = labels()
    y = y[y >= 0]  # same values, chunk sizes unknown until computed
    assert np.isnan(y.shape[0])
    out = randomized_response(y, epsilon=1.0, n_classes=K, random_state=0)
    assert_array_equal(
        out.compute(),
        randomized_response(labels(), epsilon=1.0, n_classes=K, random_state=0).compute(),
    )
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        rr_with_prior(y, np.ones((sum(CHUNKS), K)), epsilon=1.0)


def test_numpy_input_does_not_import_dask():
    code = (
        "import sys; from sklearn_labeldp.mechanisms import randomized_response; "
        "randomized_response([0, 1], epsilon=1.0, n_classes=2, random_state=0); "
        "assert 'dask' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert not is_dask(np.arange(3), None, [0, 1])
    assert is_dask(np.arange(3), da.arange(3))


# --- checks: eager without the labels' values, per block with them ------------------


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda y: randomized_response(y, epsilon=-1.0, n_classes=K), ValueError, "epsilon"),
        (lambda y: randomized_response(y, epsilon=1.0, n_classes=1), ValueError, "n_classes"),
        (lambda y: rappor(y, epsilon=1.0, n_classes=K, sparse_output=True), ValueError,
         "sparse_output=False"),
        (lambda y: rappor(y, epsilon=1.0, n_classes=K, sparse_output="no"), TypeError,
         "sparse_output"),
        (lambda y: gaussian_one_hot(y, sigma=0.0, n_classes=K), ValueError, "sigma"),
        (lambda y: laplace_one_hot(y, epsilon=np.inf, n_classes=K), ValueError, "epsilon"),
        (lambda y: rr_with_prior(y, epsilon=1.0), ValueError, "n_classes is required"),
        (lambda y: rr_with_prior(y, prior_like(y)[:, :1], epsilon=1.0), ValueError, "2 columns"),
        (lambda y: rr_with_prior(y, prior_like(y), epsilon=1.0, n_classes=3), ValueError,
         "columns"),
        (lambda y: rr_with_prior(y, prior_like(y)[:-1], epsilon=1.0), ValueError, "one row"),
        (lambda y: rr_with_prior(y, np.ones((10, K)), epsilon=1.0), ValueError, "one row"),
        (lambda y: rr_with_prior(y, prior_like(y).rechunk({0: 100}), epsilon=1.0), ValueError,
         "rechunk"),
        (lambda y: rr_with_prior(y, prior_like(y)[:, 0], epsilon=1.0), ValueError, "2-d"),
        (lambda y: randomized_response(y.astype(str), epsilon=1.0, n_classes=K), TypeError,
         "integer label codes"),
        (lambda y: randomized_response(da.stack([y, y], axis=1), epsilon=1.0, n_classes=K),
         ValueError, "1-d"),
    ],
)  # fmt: skip
def test_checks_without_label_values_are_eager(call, error, match):
    counter = Counter()
    y = labels().map_blocks(counter, meta=np.empty(0, np.int64))
    with pytest.raises(error, match=match):
        call(y)
    assert counter.calls == 0


def test_bad_call_does_not_advance_the_callers_generator():
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="epsilon"):
        randomized_response(labels(), epsilon=0.0, n_classes=K, random_state=rng)
    with pytest.raises(ValueError, match="rechunk"):
        rr_with_prior(
            labels(), prior_like(labels()).rechunk({0: 100}), epsilon=1.0, random_state=rng
        )
    assert rng.bit_generator.state == state


@pytest.mark.parametrize("mechanism", [randomized_response, rappor, laplace_one_hot, rr_with_prior])
def test_label_codes_are_checked_per_block_when_computed(mechanism):
    codes = np.zeros(1000, dtype=np.int64)
    codes[900] = K  # out of range, in the last block only
    y = da.from_array(codes, chunks=250)
    noise = {"epsilon": 1.0, "n_classes": K}
    out = mechanism(y, **noise, random_state=0)  # built without reading the labels
    first_block = np.random.Generator(np.random.PCG64(np.random.SeedSequence(0).spawn(4)[0]))
    assert_array_equal(
        out.blocks[0].compute(), mechanism(codes[:250], **noise, random_state=first_block)
    )
    with pytest.raises(ValueError, match=r"label codes in y must lie in \[0, 3\]"):
        out.compute()


def test_prior_values_are_checked_per_block_when_computed():
    y = labels()
    prior = np.tile(PRIOR_ROW, (y.shape[0], 1))
    prior[-1, 0] = np.nan
    out = rr_with_prior(y, prior, epsilon=1.0, random_state=0)
    out.blocks[0].compute()
    with pytest.raises(ValueError, match="NaN"):
        out.compute()


# --- output laws on the computed dask arrays --------------------------------------


def constant_labels(label, n=20_000, chunk=2_500):
    return da.full(n, label, chunks=chunk, dtype=np.int64)


@pytest.mark.parametrize(("n_classes", "epsilon"), [(3, 1.0), (10, 2.0)])
def test_randomized_response_follows_its_law(n_classes, epsilon):
    law = randomized_response_distribution(epsilon=epsilon, n_classes=n_classes)
    for y in (0, n_classes - 1):
        out = randomized_response(
            constant_labels(y), epsilon=epsilon, n_classes=n_classes, random_state=y
        ).compute()
        assert_follows(out, law[y], f"(K={n_classes}, y={y})")


@pytest.mark.parametrize(
    "prior_row", [[0.5, 0.2, 0.2, 0.1, 0.0], [0.0, 3.0, 0.0, 1.0, 1.0], [1.0] * 5]
)
def test_rr_with_prior_follows_its_law(prior_row):
    law = rr_with_prior_distribution([prior_row], epsilon=1.0)[0]
    for y in range(len(prior_row)):
        labels_ = constant_labels(y)
        prior = da.from_array(
            np.tile(prior_row, (labels_.shape[0], 1)), chunks=(labels_.chunks[0], -1)
        )
        out = rr_with_prior(labels_, prior, epsilon=1.0, random_state=10 + y).compute()
        assert_follows(out, law[y], f"(prior={prior_row}, y={y})")


def test_rr_with_prior_without_prior_follows_randomized_response():
    law = randomized_response_distribution(epsilon=0.5, n_classes=6)
    out = rr_with_prior(constant_labels(4), epsilon=0.5, n_classes=6, random_state=1).compute()
    assert_follows(out, law[4])


@pytest.mark.parametrize("epsilon", [0.4, 3.0])
def test_rappor_whole_vectors_follow_its_law(epsilon):
    # K = 3: chi-square over the 8 vectors, built from the per-coordinate law.
    law = rappor_distribution(epsilon=epsilon, n_classes=3)
    vectors = np.array([[(v >> 2) & 1, (v >> 1) & 1, v & 1] for v in range(8)])
    for y in (0, 2):
        z = rappor(constant_labels(y), epsilon=epsilon, n_classes=3, random_state=y).compute()
        probs = np.prod(np.where(vectors == 1, law[y], 1 - law[y]), axis=1)
        assert_follows(z @ np.array([4, 2, 1]), probs, f"(y={y})")


def test_additive_noise_follows_its_law():
    y = da.from_array(np.arange(3000) % 3, chunks=700)
    one_hot = np.eye(3)[y.compute()]
    laplace = laplace_one_hot(y, epsilon=0.5, n_classes=3, random_state=11).compute()
    assert kstest((laplace - one_hot).ravel(), "laplace", args=(0.0, 4.0)).pvalue > 1e-3
    gauss = gaussian_one_hot(y, sigma=0.3, n_classes=3, random_state=12).compute()
    assert kstest((gauss - one_hot).ravel(), "norm", args=(0.0, 0.3)).pvalue > 1e-3


# --- scale ------------------------------------------------------------------------


def test_rr_with_prior_computes_blockwise_in_bounded_memory():
    n, n_classes, chunk = 2_000_000, 10, 50_000

    def noisy_label_sum(n):
        y = da.random.default_rng(0).integers(n_classes, size=n, chunks=chunk)
        prior = da.random.default_rng(1).random((n, n_classes), chunks=(chunk, n_classes))
        return rr_with_prior(y, prior, epsilon=1.0, random_state=0).sum()

    noisy_label_sum(2 * chunk).compute()  # first-call allocations (caches) out of the count
    total = noisy_label_sum(n)
    tracemalloc.start()
    try:
        value = total.compute()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 0 < value < n * (n_classes - 1)
    # One (n, K) float64 prior would be 160 MB; a block of it is 4 MB (the
    # traced peak is about 15 MB: a block, its sorted copy and temporaries).
    assert peak < n * n_classes * 8 / 6, f"peak {peak / 1e6:.0f} MB"


@pytest.mark.dask_cluster
def test_mechanism_on_a_local_cluster_matches_the_local_result():
    distributed = pytest.importorskip("distributed")
    y = labels()
    prior = prior_like(y)
    out = rr_with_prior(y, prior, epsilon=1.0, random_state=8)
    z = rappor(y, epsilon=1.0, n_classes=K, random_state=8)
    expected = dask.compute(out, z)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            death_timeout=60,  # seconds a worker may take to start
        ) as cluster,
        distributed.Client(cluster, timeout=60) as client,
    ):
        futures = client.compute([out, z])
        on_cluster = [future.result(timeout=60) for future in futures]
        ran_on = client.run(lambda: True)
    assert len(ran_on) == 2
    for got, want in zip(on_cluster, expected, strict=True):
        assert_array_equal(got, want)
