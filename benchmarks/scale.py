"""Scale-out of the label mechanisms on dask: throughput and memory against n.

For n labels (K = 10 classes, uniform labels; for ``rr_with_prior`` a prior
of iid uniform entries, unnormalised) it times ``randomized_response``,
``rr_with_prior`` and ``rappor`` (eps = 1), as the median of ``--repeats``
runs (one run from n = 1e8; a warm-up run at the smallest n):

- ``numpy``: the mechanism on in-memory numpy arrays (inputs built before
  the clock starts), followed by the reduction below; only at the sizes whose
  inputs and outputs fit in ``--numpy-max-gb``;
- ``dask, 1 worker``, ``dask, 2 workers`` (``--workers 1,2,4,8`` for more):
  the same call on dask arrays on a ``distributed.LocalCluster`` (worker
  processes, one thread each, on localhost). The inputs are generated inside
  the graph, block by block (``--chunk`` labels per block), and the output is reduced at once
  (``da.bincount`` of the noisy labels, column sums of the RAPPOR bits), so
  no worker ever holds anything of size n or n*K. The clock includes
  generating the inputs; the ``input only`` column times the same graph
  without the mechanism (the reduction applied to the generated inputs) on
  one worker, and the ``net`` ratio subtracts it.

Memory: the peak resident set size (psutil, sampled every 20 ms) of the
process running the mechanism: this process for numpy (its inputs
included), each worker process for dask (the largest of the workers).

Workers keep distributed's environment, which sets
``MALLOC_TRIM_THRESHOLD_=65536``: glibc then serves every allocation above
128 KiB with a fresh ``mmap``, faulted in page by page. The mechanisms
therefore reuse their chunks' work arrays (``mechanisms/_buffers.py``);
before they did, ``rr_with_prior`` ran 2 to 3 times slower per block in a
worker. ``--worker-mmap-threshold BYTES`` sets ``MALLOC_MMAP_THRESHOLD_`` in
the workers to measure without the setting.

``--per-block`` times one block of each workload instead (the mechanisms at
1e6 labels, K = 10; the linear models' per-block statistics of a dask fit):
in fresh Python processes with and without ``MALLOC_TRIM_THRESHOLD_=65536``
(alternating, BLAS single-threaded in both), then in this process against
the workers of a ``LocalCluster`` of 1 and 2 single-threaded worker
processes, and prints both tables (about 10 minutes on 2 shared cores;
``--blocks`` picks workloads, ``--no-cluster`` skips the second table).

The ratio columns compare dask on one worker with numpy where both ran; a
plot of time against n goes to ``--plot`` (default
``benchmarks/results/scale.png``), and a last paragraph extrapolates the
cost per block measured on one worker to 1e10 labels on N machines.

Run ``python benchmarks/scale.py`` (n = 1e5 to 1e8, 1e6 labels per block,
about 6 minutes on 2 cores) or add ``--quick`` (n = 1e5 and 1e6, 1e5 labels
per block, under a minute). Needs the ``dask`` extra, psutil and matplotlib.
"""

import argparse
import math
import os
import platform
import statistics
import threading
import time
from functools import partial
from pathlib import Path

import numpy as np
import psutil

from sklearn_labeldp.mechanisms import randomized_response, rappor, rr_with_prior

SEED = 0
N_CLASSES = 10
EPSILON = 1.0
MECHANISMS = ("randomized_response", "rr_with_prior", "rappor")
# Bytes per label the numpy path holds (inputs, output, temporaries), estimated.
NUMPY_BYTES_PER_LABEL = {"randomized_response": 40, "rr_with_prior": 130, "rappor": 30}
LARGE_N = 10**8  # from here on, one run per measurement
TARGET_N = 10**10
SCHEDULER_SECONDS_PER_TASK = 1e-3  # the distributed scheduler's order of magnitude
DEFAULT_PLOT = Path(__file__).resolve().parent / "results" / "scale.png"


# --- the computations -------------------------------------------------------------


def numpy_inputs(name, n):
    rng = np.random.default_rng(SEED)
    y = rng.integers(N_CLASSES, size=n)
    prior = rng.random((n, N_CLASSES)) if name == "rr_with_prior" else None
    return y, prior


def numpy_run(name, y, prior, rng):
    """The mechanism on numpy arrays, then the reduction the dask path does."""
    if name == "randomized_response":
        out = randomized_response(y, epsilon=EPSILON, n_classes=N_CLASSES, random_state=rng)
        return np.bincount(out, minlength=N_CLASSES)
    if name == "rr_with_prior":
        out = rr_with_prior(y, prior, epsilon=EPSILON, random_state=rng)
        return np.bincount(out, minlength=N_CLASSES)
    return rappor(y, epsilon=EPSILON, n_classes=N_CLASSES, random_state=rng).sum(
        axis=0, dtype=np.int64
    )


def dask_graph(name, n, chunk, mechanism=True):
    """The lazy reduction of the mechanism's output (or of its inputs only)."""
    import dask.array as da

    y = da.random.default_rng(SEED).integers(N_CLASSES, size=n, chunks=chunk)
    prior = None
    if name == "rr_with_prior":
        prior = da.random.default_rng(SEED + 1).random((n, N_CLASSES), chunks=(chunk, N_CLASSES))
    if not mechanism:
        counts = da.bincount(y, minlength=N_CLASSES)
        return counts if prior is None else da.concatenate([counts, prior.sum(axis=0)])
    if name == "randomized_response":
        out = randomized_response(y, epsilon=EPSILON, n_classes=N_CLASSES, random_state=None)
        return da.bincount(out, minlength=N_CLASSES)
    if name == "rr_with_prior":
        out = rr_with_prior(y, prior, epsilon=EPSILON, random_state=None)
        return da.bincount(out, minlength=N_CLASSES)
    z = rappor(y, epsilon=EPSILON, n_classes=N_CLASSES, random_state=None)
    return z.sum(axis=0, dtype=np.int64)


# --- measurement ---------------------------------------------------------------------


class PeakRss:
    """Largest resident set size of each of ``pids`` inside the ``with`` block."""

    def __init__(self, pids, interval=0.02):
        self.processes = [psutil.Process(pid) for pid in pids]
        self.interval = interval
        self.peaks = [0] * len(pids)
        self._stop = threading.Event()

    def _sample(self):
        for i, process in enumerate(self.processes):
            self.peaks[i] = max(self.peaks[i], process.memory_info().rss)

    def _loop(self):
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self):
        self._sample()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()


def repeats_at(n, repeats):
    """Runs per measurement: one at n >= LARGE_N, to keep the full run near 6 minutes."""
    return 1 if n >= LARGE_N else repeats


def timed(function, repeats, pids, warm_up):
    """Median seconds of ``repeats`` runs (after a warm-up run if asked), and the peak RSS."""
    if warm_up:
        function()  # imports, first allocations; done at the smallest n only
    times = []
    with PeakRss(pids) as rss:
        for _ in range(repeats):
            start = time.perf_counter()
            function()
            times.append(time.perf_counter() - start)
    return statistics.median(times), max(rss.peaks)


def bench_numpy(sizes, repeats, max_bytes):
    results = {}
    rng = np.random.default_rng(SEED + 2)
    for name in MECHANISMS:
        for n in sizes:
            if n * NUMPY_BYTES_PER_LABEL[name] > max_bytes:
                continue
            y, prior = numpy_inputs(name, n)
            run = partial(numpy_run, name, y, prior, rng)
            results[name, n] = timed(run, repeats_at(n, repeats), [os.getpid()], n == sizes[0])
            del y, prior, run
    return results


def bench_dask(sizes, repeats, chunk, n_workers, timeout, inputs=True):
    """(time, peak worker RSS, time of the inputs alone or nan) per (name, n)."""
    from distributed import Client, LocalCluster

    results, inputs_only = {}, {}
    with (
        LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            death_timeout=timeout,  # seconds a worker may take to start
        ) as cluster,
        Client(cluster, timeout=timeout) as client,
    ):
        pids = list(client.run(os.getpid).values())
        idle = max(client.run(lambda: psutil.Process().memory_info().rss).values())

        def run(*graph_args):
            # A new graph (fresh streams) each run; bounded in time: a stuck
            # cluster raises instead of hanging.
            return client.compute(dask_graph(*graph_args)).result(timeout=timeout)

        for name in MECHANISMS:
            for n in sizes:
                r, first = repeats_at(n, repeats), n == sizes[0]
                results[name, n] = timed(partial(run, name, n, chunk), r, pids, first)
                key = ("rr_with_prior" if name == "rr_with_prior" else "labels", n)
                if inputs and key not in inputs_only:
                    graph = partial(run, name, n, chunk, False)
                    inputs_only[key] = timed(graph, r, pids, first)
                results[name, n] += (inputs_only[key][0] if inputs else math.nan,)
    return results, idle


# --- report ----------------------------------------------------------------------------


def fmt_n(n):
    exponent = math.log10(n)
    return f"1e{exponent:.0f}" if exponent.is_integer() else f"{n:.0e}"


def fmt_rate(n, seconds):
    return f"{n / seconds:.3g}"


def workers_label(workers):
    return f"{workers} worker" + ("s" if workers > 1 else "")


def print_tables(sizes, numpy_res, dask_res, chunk, repeats):
    single = f" (1 run from n = {fmt_n(LARGE_N)})" if max(sizes) >= LARGE_N else ""
    counts = sorted(dask_res)
    more = counts[1:]
    print(f"\n### Throughput (labels/s), K = {N_CLASSES}, eps = {EPSILON}, "
          f"{chunk:,} labels per dask block, median of {repeats} runs{single}\n")
    print("| mechanism | n | numpy (s) | "
          + " | ".join(f"dask {workers_label(w)} (s)" for w in counts)
          + " | input only (s) | numpy labels/s | "
          + " | ".join(f"{workers_label(w)} labels/s" for w in counts)
          + " | 1 worker / numpy | net 1 worker / numpy | "
          + " | ".join(f"{workers_label(w)} speed-up" for w in more) + " |")
    print("|---|---:|" + "---:|" * (2 * len(counts) + len(more) + 4))
    for name in MECHANISMS:
        for n in sizes:
            one, _, base1 = dask_res[1][name, n]
            times = [dask_res[w][name, n][0] for w in counts]
            if (name, n) in numpy_res:
                t_np = numpy_res[name, n][0]
                np_cells = [f"{t_np:.3f}", fmt_rate(n, t_np)]
                ratio = f"{one / t_np:.2f}x"
                net = f"{max(one - base1, 0.0) / t_np:.2f}x"
            else:
                np_cells, ratio, net = ["(too big)", "-"], "-", "-"
            print(f"| {name} | {fmt_n(n)} | {np_cells[0]} | "
                  + " | ".join(f"{t:.3f}" for t in times) + f" | {base1:.3f} | {np_cells[1]} | "
                  + " | ".join(fmt_rate(n, t) for t in times) + f" | {ratio} | {net} | "
                  + " | ".join(f"{one / dask_res[w][name, n][0]:.2f}x" for w in more) + " |")


def print_memory(sizes, numpy_res, dask_res, idle):
    counts = sorted(dask_res)
    print("\n### Peak resident memory (MB): this process for numpy (inputs included), the "
          "largest worker for dask\n")
    print("| mechanism | n | numpy | "
          + " | ".join(f"dask {workers_label(w)} (per worker)" for w in counts)
          + " | one (n, K) float64 array |")
    print("|---|---:|---:|" + "---:|" * (len(counts) + 1))
    for name in MECHANISMS:
        for n in sizes:
            np_peak = numpy_res.get((name, n), (None, None))[1]
            np_cell = f"{np_peak / 1e6:.0f}" if np_peak else "-"
            print(f"| {name} | {fmt_n(n)} | {np_cell} | "
                  + " | ".join(f"{dask_res[w][name, n][1] / 1e6:.0f}" for w in counts)
                  + f" | {n * N_CLASSES * 8 / 1e6:.0f} |")
    print(f"\n(a worker process holds about {idle / 1e6:.0f} MB before any work)")


def tasks_per_block(name, n, chunk):
    """Tasks of the optimised graph (what the scheduler runs) per block of labels."""
    import dask

    (graph,) = dask.optimize(dask_graph(name, n, chunk))
    return len(graph.__dask_graph__()) / math.ceil(n / chunk)


def print_extrapolation(sizes, dask_res, chunk, cores_per_machine):
    n = max(sizes)
    blocks = math.ceil(n / chunk)
    target_blocks = math.ceil(TARGET_N / chunk)
    lines = []
    for name in MECHANISMS:
        # One worker runs every block in turn: worker-seconds per block, inputs included.
        per_block = dask_res[1][name, n][0] / blocks
        tasks = target_blocks * tasks_per_block(name, n, chunk)
        floor = tasks * SCHEDULER_SECONDS_PER_TASK
        estimates = []
        for machines in (1, 10, 100):
            compute = target_blocks * per_block / (machines * cores_per_machine)
            bound = " (scheduler-bound)" if floor > compute else ""
            estimates.append(f"{machines} machine{'s' if machines > 1 else ''}: "
                             f"{fmt_duration(max(compute, floor))}{bound}")
        lines.append(f"{name}: {per_block:.3g} worker-seconds per block of {chunk:,} labels, "
                     f"{target_blocks * per_block / 3600:.1f} worker-hours and {tasks:,.0f} "
                     f"tasks for 1e10 labels; {', '.join(estimates)}")
    print(
        f"\n### What 1e10 labels would take\n\nFrom the 1-worker run at n = {fmt_n(n)} "
        f"({blocks} blocks): the cost of a block (input generation included; reading real "
        "labels from storage would replace it) times the 1e10 labels' "
        f"{target_blocks:,} blocks, spread over N machines of {cores_per_machine} cores "
        "(one single-threaded worker per core), but never below the scheduler's time, "
        f"~{SCHEDULER_SECONDS_PER_TASK * 1e3:g} ms per task of the optimised graph. "
        + "; ".join(lines)
        + f". Larger blocks cut the scheduler's share. Every reduction here returns "
        f"{N_CLASSES} numbers; keeping RAPPOR's bits instead takes "
        f"{TARGET_N * N_CLASSES / 1e9:.0f} GB (uint8) and the noisy labels "
        f"{TARGET_N * 8 / 1e9:.0f} GB (int64), spread over the workers' memory or storage."
    )


def fmt_duration(seconds):
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def plot(sizes, numpy_res, dask_res, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    colors = dict(zip(MECHANISMS, ("C0", "C1", "C2"), strict=True))
    for name in MECHANISMS:
        ns = [n for n in sizes if (name, n) in numpy_res]
        ax.plot(ns, [numpy_res[name, n][0] for n in ns], "o-", color=colors[name],
                label=f"{name}, numpy")
        for workers, style in zip(sorted(dask_res), ("s--", "^:", "v-.", "D:"), strict=False):
            ax.plot(sizes, [dask_res[workers][name, n][0] for n in sizes], style,
                    color=colors[name], label=f"{name}, dask {workers_label(workers)}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n (labels)")
    ax.set_ylabel("seconds (median)")
    ax.set_title(f"Label mechanisms, K = {N_CLASSES}: numpy against a dask LocalCluster")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(True, which="both", alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\nplot: {path}")


# --- per block: distributed's worker environment -------------------------------------

BLOCK_LABELS = 1_000_000  # labels per block of the mechanisms
LINEAR_BLOCK_ROWS = 250_000  # rows per block of the linear models' statistics
NEWTON_BLOCK_ROWS = 50_000  # DP-Newton's step forms K Hessians per block: a smaller block
LINEAR_FEATURES = 32
BLOCK_WORKLOADS = (
    "randomized_response", "rr_with_prior", "rappor", "laplace_one_hot", "gaussian_one_hot",
    "least_squares_stats", "newton_step_sums", "fc_step_sums",
)
# What distributed's nanny puts in a worker's environment before Python starts
# (its "distributed.nanny.pre-spawn-environ"): the child processes get the BLAS
# limits in both columns, and the malloc threshold in the "worker env" one.
SINGLE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
WORKER_MALLOC_ENV = {"MALLOC_TRIM_THRESHOLD_": "65536"}


def block_workload(name):
    """A function of a Generator computing one block of ``name``; inputs built here, once."""
    from sklearn_labeldp.linear_model._dask import _block_statistics, _block_step, _keys_shapes
    from sklearn_labeldp.mechanisms import gaussian_one_hot, laplace_one_hot

    rng = np.random.default_rng(SEED)
    if name in ("least_squares_stats", "newton_step_sums", "fc_step_sums"):
        # What a worker runs on one block of a dask fit (linear_model/_dask.py).
        rows = NEWTON_BLOCK_ROWS if name == "newton_step_sums" else LINEAR_BLOCK_ROWS
        Z = rng.standard_normal((rows, LINEAR_FEATURES))
        Z /= np.linalg.norm(Z, axis=1, keepdims=True)
        codes = rng.integers(N_CLASSES, size=(rows, 1))
        if name == "least_squares_stats":
            keys = _keys_shapes(LINEAR_FEATURES, N_CLASSES, "weighted", False)
            return lambda _: _block_statistics(codes, Z, keys_shapes=keys, n_classes=N_CLASSES,
                                               formulation="weighted", data_norm=1.0)
        theta = 0.1 * rng.standard_normal((N_CLASSES, LINEAR_FEATURES))
        return lambda _: _block_step(codes, Z, theta=theta, n_classes=N_CLASSES,
                                     hessians=name == "newton_step_sums")
    y = rng.integers(N_CLASSES, size=BLOCK_LABELS)
    if name == "rr_with_prior":
        prior = rng.random((BLOCK_LABELS, N_CLASSES))
        return lambda r: rr_with_prior(y, prior, epsilon=EPSILON, random_state=r)
    mechanism = {"randomized_response": randomized_response, "rappor": rappor,
                 "laplace_one_hot": laplace_one_hot}.get(name)
    if mechanism is not None:
        return lambda r: mechanism(y, epsilon=EPSILON, n_classes=N_CLASSES, random_state=r)
    return lambda r: gaussian_one_hot(y, sigma=1.0 / EPSILON, n_classes=N_CLASSES,
                                      random_state=r)


def time_block(name, repeats):
    """Medians of one block's wall and CPU seconds, and its minor page faults per run.

    Single-threaded BLAS; a warm-up run first; each timed run draws from a
    fresh generator. The CPU time of the process (user + system: the kernel's
    page faults included) is the steadier measure on a shared machine. Runs in
    a child process, in this process or in a Dask worker.
    """
    import resource

    from threadpoolctl import threadpool_limits

    run = block_workload(name)
    with threadpool_limits(limits=1):
        run(np.random.default_rng(1))
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        walls, cpus = [], []
        for i in range(repeats):
            rng = np.random.default_rng(2 + i)
            wall, cpu = time.perf_counter(), time.process_time()
            run(rng)
            cpus.append(time.process_time() - cpu)
            walls.append(time.perf_counter() - wall)
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    return statistics.median(walls), statistics.median(cpus), faults / repeats


def time_block_in_child(name, repeats, worker_malloc, timeout):
    """:func:`time_block` in a fresh Python, with or without the worker's malloc setting."""
    import json
    import subprocess
    import sys

    env = {key: value for key, value in os.environ.items() if not key.startswith("MALLOC_")}
    env.update(SINGLE_THREAD_ENV)
    if worker_malloc:
        env.update(WORKER_MALLOC_ENV)
    result = subprocess.run(
        [sys.executable, __file__, "--child-block", name, "--repeats", str(repeats)],
        env=env, capture_output=True, text=True, check=True, timeout=timeout,
    )
    return tuple(json.loads(result.stdout.strip().splitlines()[-1]))


def bench_block_environment(names, repeats, rounds, timeout):
    """Per-block median in child processes without and with MALLOC_TRIM_THRESHOLD_=65536.

    The two kinds of child alternate, in both orders, ``rounds`` times; each
    cell is the median over rounds of the children's medians.
    """
    results = {}
    for name in names:
        runs = {False: [], True: []}
        for r in range(rounds):
            for worker_malloc in ((False, True) if r % 2 == 0 else (True, False)):
                runs[worker_malloc].append(
                    time_block_in_child(name, repeats, worker_malloc, timeout))
        results[name] = {mode: tuple(statistics.median(column) for column in zip(*values,
                                                                                 strict=True))
                         for mode, values in runs.items()}
    return results


def bench_block_cluster(names, repeats, timeout):
    """Per-block median in this process (the client) and in each worker of 1 and 2 workers.

    Workers keep distributed's environment. The client's time is measured
    right before each workers' measurement of the same workload; with two
    workers both run at once (one block each), as in a computation.
    """
    from distributed import Client, LocalCluster

    results = {}
    for n_workers in (1, 2):
        with (
            LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                         host="127.0.0.1", dashboard_address=None,
                         death_timeout=timeout) as cluster,
            Client(cluster, timeout=timeout) as client,
        ):
            workers = list(client.scheduler_info()["workers"])
            for name in names:
                client_times = time_block(name, repeats)[:2]
                futures = [client.submit(time_block, name, repeats, pure=False, workers=[w],
                                         allow_other_workers=False) for w in workers]
                worker_times = [f.result(timeout=timeout)[:2] for f in futures]
                per_worker = zip(*worker_times, strict=True)
                results[name, n_workers] = (
                    client_times, tuple(statistics.median(t) for t in per_worker))
    return results


def print_block_tables(names, environment, cluster, repeats, rounds):
    print(f"\n### One block in a process with distributed's malloc setting (median of {rounds} "
          f"child processes x {repeats} runs)\n")
    print(f"Blocks: {BLOCK_LABELS:,} labels, K = {N_CLASSES} for the mechanisms; "
          f"{LINEAR_BLOCK_ROWS:,} x {LINEAR_FEATURES} rows for the least-squares statistics and "
          f"the FC step, {NEWTON_BLOCK_ROWS:,} for the Newton step. BLAS single-threaded in "
          "both columns. CPU = the process's user + system time (page faults included).\n")
    print("| block | plain CPU (ms) | MALLOC_TRIM_THRESHOLD_=65536 CPU (ms) | CPU ratio "
          "| wall ratio | minor faults plain | minor faults trim |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        (w_plain, c_plain, f_plain) = environment[name][False]
        (w_trim, c_trim, f_trim) = environment[name][True]
        print(f"| {name} | {c_plain * 1e3:.0f} | {c_trim * 1e3:.0f} | {c_trim / c_plain:.2f}x "
              f"| {w_trim / w_plain:.2f}x | {f_plain:,.0f} | {f_trim:,.0f} |")
    if not cluster:
        return
    print(f"\n### One block in a LocalCluster worker against the client (median of {repeats} "
          "runs; with 2 workers, both at once; wall ms, CPU ms in brackets)\n")
    print("| block | client | 1 worker | worker / client (CPU) | client | 2 workers, each "
          "| worker / client (CPU) | blocks/s, 1 worker | blocks/s, 2 workers "
          "| 1 -> 2 workers |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        (c1, cc1), (w1, wc1) = cluster[name, 1]
        (c2, cc2), (w2, wc2) = cluster[name, 2]
        print(f"| {name} | {c1 * 1e3:.0f} ({cc1 * 1e3:.0f}) | {w1 * 1e3:.0f} ({wc1 * 1e3:.0f}) "
              f"| {w1 / c1:.2f}x ({wc1 / cc1:.2f}x) | {c2 * 1e3:.0f} ({cc2 * 1e3:.0f}) "
              f"| {w2 * 1e3:.0f} ({wc2 * 1e3:.0f}) | {w2 / c2:.2f}x ({wc2 / cc2:.2f}x) "
              f"| {1 / w1:.2f} | {2 / w2:.2f} | {w1 / w2 * 2:.2f}x |")


def main_blocks(args):
    names = args.blocks.split(",") if args.blocks else list(BLOCK_WORKLOADS)
    unknown = sorted(set(names) - set(BLOCK_WORKLOADS))
    if unknown:
        raise SystemExit(f"unknown block workloads {unknown}; choose from {BLOCK_WORKLOADS}")
    import sklearn_labeldp

    print(f"One block per workload: sklearn_labeldp from {Path(sklearn_labeldp.__file__).parent}, "
          f"numpy {np.__version__}, {os.cpu_count()} CPUs; load average "
          f"{os.getloadavg()[0]:.1f} (the machine is shared)")
    start = time.perf_counter()
    environment = bench_block_environment(names, args.repeats, args.rounds, args.timeout)
    cluster = None if args.no_cluster else bench_block_cluster(names, args.repeats, args.timeout)
    print_block_tables(names, environment, cluster, args.repeats, args.rounds)
    print(f"\ntotal wall time {time.perf_counter() - start:.0f} s")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per measurement")
    parser.add_argument("--quick", action="store_true", help="n = 1e5 and 1e6 only")
    parser.add_argument("--max-n", type=float, default=1e8, help="largest n (a power of 10)")
    parser.add_argument("--chunk", type=int, default=None,
                        help="labels per dask block (default 1e6, 1e5 with --quick)")
    parser.add_argument("--worker-mmap-threshold", type=int, default=None,
                        help="set MALLOC_MMAP_THRESHOLD_ (bytes) in the workers; by default "
                        "they keep distributed's environment (MALLOC_TRIM_THRESHOLD_=65536)")
    parser.add_argument("--numpy-max-gb", type=float, default=6.0,
                        help="skip numpy runs needing more memory than this")
    parser.add_argument("--cores-per-machine", type=int, default=16,
                        help="cores per machine in the 1e10 estimate")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds a cluster start or one computation may take")
    parser.add_argument("--workers", default="1,2",
                        help="comma-separated worker counts of the LocalClusters (1 is always "
                        "run: the ratios and the 1e10 estimate use it); 1,2,4,8 on 16 cores")
    parser.add_argument("--plot", type=Path, default=DEFAULT_PLOT, help="where the plot goes")
    parser.add_argument("--per-block", action="store_true",
                        help="time one block per workload instead: plain process against "
                        "distributed's MALLOC_TRIM_THRESHOLD_=65536, then client against workers")
    parser.add_argument("--blocks", default=None,
                        help="with --per-block, comma-separated among "
                        + ", ".join(BLOCK_WORKLOADS))
    parser.add_argument("--rounds", type=int, default=4,
                        help="with --per-block, child processes of each kind per workload")
    parser.add_argument("--no-cluster", action="store_true",
                        help="with --per-block, skip the LocalCluster measurement")
    parser.add_argument("--child-block", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    try:
        worker_counts = sorted({1, *(int(w) for w in args.workers.split(","))})
    except ValueError:
        parser.error(f"--workers must be comma-separated integers, got {args.workers!r}")
    if worker_counts[0] < 1:
        parser.error("--workers must be >= 1")
    if args.child_block:
        import json

        print(json.dumps(time_block(args.child_block, args.repeats)))
        return
    if args.per_block:
        main_blocks(args)
        return
    largest = 1e6 if args.quick else args.max_n
    chunk = args.chunk or (100_000 if args.quick else 1_000_000)
    if args.worker_mmap_threshold is not None:
        import dask

        dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_MMAP_THRESHOLD_":
                         args.worker_mmap_threshold})
    sizes = [10**e for e in range(5, int(round(math.log10(largest))) + 1)]
    print(f"Label mechanisms at scale: n = {', '.join(map(fmt_n, sizes))}; numpy "
          f"{np.__version__}, {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}, "
          f"{psutil.virtual_memory().total / 2**30:.0f} GiB; load average "
          f"{os.getloadavg()[0]:.1f} (the machine is shared)")
    print("worker environment: distributed's pre-spawn-environ, "
          + ("unchanged" if args.worker_mmap_threshold is None
             else f"plus MALLOC_MMAP_THRESHOLD_={args.worker_mmap_threshold}"))
    start = time.perf_counter()
    numpy_res = bench_numpy(sizes, args.repeats, args.numpy_max_gb * 1e9)
    dask_res, idle = {}, 0
    for workers in worker_counts:
        # The inputs alone are timed on one worker, for the net column.
        dask_res[workers], idle = bench_dask(sizes, args.repeats, chunk, workers,
                                             args.timeout, inputs=workers == 1)
    print_tables(sizes, numpy_res, dask_res, chunk, args.repeats)
    print_memory(sizes, numpy_res, dask_res, idle)
    print_extrapolation(sizes, dask_res, chunk, args.cores_per_machine)
    plot(sizes, numpy_res, dask_res, args.plot)
    print(f"\ntotal wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
