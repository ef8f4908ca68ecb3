"""DP least squares at scale: one fit on numpy arrays vs on dask arrays, against n.

``DPLeastSquaresClassifier`` (label DP, the default "weighted" formulation,
eps = 1, ``data_norm`` given so that no quantile is computed) on ``n`` rows of
``d = 32`` Gaussian features and ``K = 10`` uniform labels:

- ``numpy``: the arrays in memory, built before the clock starts;
- ``dask, threads``: dask arrays (``--chunk`` rows per block) generated inside
  the graph, on the local threaded scheduler;
- ``dask, 2 workers``: the same graph on a ``distributed.LocalCluster`` of two
  worker processes (one thread each, localhost); ``--workers 1,2,4,8`` runs a
  cluster of each size instead.

The dask fit reduces the exact per-block statistics (``X^T X`` per class and
the per-class sums) with a tree reduction and adds the noise once on the
client, so the client holds ``O(K d^2)`` numbers whatever ``n``; its peak
resident memory is printed beside numpy's. Medians of ``--repeats`` fits.
Run ``python benchmarks/scale_least_squares.py`` (n up to 1e7, about 3
minutes on 2 cores) or ``--quick`` (n up to 1e6).
"""

import argparse
import logging
import statistics
import threading
import time

import numpy as np
import psutil

from sklearn_labeldp import BudgetAccountant, DPLeastSquaresClassifier

D, K, DATA_NORM, CHUNK = 32, 10, 12.0, 250_000


def fit(X, y):
    model = DPLeastSquaresClassifier(epsilon=1.0, data_norm=DATA_NORM, classes=range(K),
                                     accountant=BudgetAccountant(delta=1.0), random_state=0)
    return model.fit(X, y)


def peak_rss_during(function):
    """``function()``'s result and this process's peak RSS in MB, sampled every 20 ms."""
    process, peak, done = psutil.Process(), [0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], process.memory_info().rss)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        result = function()
    finally:
        done.set()
        sampler.join()
    return result, peak[0] / 2**20


def timed(function, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def dask_data(n, chunk):
    import dask.array as da

    state = da.random.RandomState(0)
    X = state.standard_normal((n, D), chunks=(chunk, D))
    y = state.randint(0, K, size=n, chunks=chunk)
    return X, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 1e5 and 1e6 only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=CHUNK, help="rows per dask block")
    parser.add_argument("--workers", default="2",
                        help="comma-separated worker counts of the LocalClusters")
    args = parser.parse_args()
    try:
        worker_counts = sorted({int(w) for w in args.workers.split(",")})
    except ValueError:
        parser.error(f"--workers must be comma-separated integers, got {args.workers!r}")
    if worker_counts[0] < 1:
        parser.error("--workers must be >= 1")
    logging.getLogger("distributed").setLevel(logging.ERROR)
    import dask
    import distributed

    sizes = [10**5, 10**6] if args.quick else [10**5, 10**6, 10**7]
    rows = []
    start_all = time.perf_counter()
    for n in sizes:
        rng = np.random.default_rng(0)
        X, y = rng.standard_normal((n, D)), rng.integers(0, K, size=n)
        numpy_s = timed(lambda X=X, y=y: fit(X, y), args.repeats)
        _, numpy_mb = peak_rss_during(lambda X=X, y=y: fit(X, y))
        del X, y
        Xd, yd = dask_data(n, min(args.chunk, n))
        with dask.config.set(scheduler="threads"):
            threads_s = timed(lambda Xd=Xd, yd=yd: fit(Xd, yd), args.repeats)
            _, threads_mb = peak_rss_during(lambda Xd=Xd, yd=yd: fit(Xd, yd))
        rows.append([n, numpy_s, numpy_mb, threads_s, threads_mb])
    for workers in worker_counts:
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, host="127.0.0.1") as cluster, \
                distributed.Client(cluster):
            for row in rows:
                Xd, yd = dask_data(row[0], min(args.chunk, row[0]))
                row.append(timed(lambda Xd=Xd, yd=yd: fit(Xd, yd), args.repeats))

    print(f"DPLeastSquaresClassifier (label DP, weighted), d = {D}, K = {K}, "
          f"{args.chunk:,} rows per dask block, median of {args.repeats}\n")
    print("| n | numpy (s) | numpy peak RSS (MB) | dask threads (s) | dask peak RSS (MB) | "
          + " | ".join(f"dask {w} worker{'s' if w > 1 else ''} (s)" for w in worker_counts)
          + " | threads / numpy |")
    print("|---:|" + "---:|" * (len(worker_counts) + 5))
    for n, numpy_s, numpy_mb, threads_s, threads_mb, *cluster_s in rows:
        print(f"| {n:.0e} | {numpy_s:.2f} | {numpy_mb:.0f} | {threads_s:.2f} | {threads_mb:.0f} | "
              + " | ".join(f"{t:.2f}" for t in cluster_s) + f" | {threads_s / numpy_s:.2f}x |")
    print(f"\n(dask times include generating the data inside the graph; "
          f"total {time.perf_counter() - start_all:.0f} s)")


if __name__ == "__main__":
    main()
