"""Where the dask speed-up of the label mechanisms is lost, from 1 to 16 workers.

For each worker count of ``--workers`` (default 1, 2, 4, 8, 16), one
``distributed.LocalCluster`` of single-threaded worker processes runs the
graphs of ``benchmarks/scale.py`` (``dask_graph``: K = 10 uniform labels,
and for ``rr_with_prior`` an iid uniform prior, generated block by block
inside the graph; ``randomized_response``, ``rr_with_prior`` and ``rappor``
at eps = 1; the output reduced at once to 10 numbers) at ``--n`` labels and
each block size of ``--chunks``, and the input-only graphs (the same
reduction applied to the generated inputs, no mechanism). Every computation
runs inside ``distributed.get_task_stream``, and the CPU time of the
scheduler's event-loop thread (in this process; the client's messages go
through the same loop) is read before and after it. The wall time then splits
into

- ``submit``: building, optimising and sending the graph (until
  ``client.compute`` returns);
- ``start``: from the submission to the first task's start on a worker;
- ``makespan``: from the first task's start to the last task's end;
- ``tail``: from the last task's end to the result in the client;

and the makespan into the compute time of all tasks (``C``, summed over the
workers) and the utilisation ``U = C / (workers x makespan)`` (idle workers:
fewer blocks than workers, gaps between tasks, imbalance). With
``O = wall / makespan`` every run satisfies ``wall = C / (w U) x O``, so the
speed-up of ``w`` workers over one factors exactly as::

    speed-up = w x (C_1 / C_w) x (U_w / U_1) x (O_1 / O_w)

``C_1 / C_w`` below 1 is slower blocks (memory bandwidth, caches, SMT
siblings, clocks shared by busy cores), ``U_w / U_1`` below 1 is idle
workers (too few blocks, the scheduler's latency per task, imbalance), and
``O_1 / O_w`` below 1 is the fixed cost of a computation (graph, start,
result) that does not shrink with workers. The tables print the three
factors next to the speed-up, with the tasks of the optimised graph, blocks
per worker, compute seconds per block, the slowest worker's busy time over
the mean one's, transfer seconds and the scheduler thread's CPU milliseconds
per task. Per task kind (``key_split`` of the key: the random inputs, the
mechanism, the reduction) a second table gives the mean compute milliseconds
at 1 worker and at the largest count.

``--big-n`` (e.g. ``1e9``) adds runs of the mechanisms (no input-only
graphs) at that size with the largest worker count and then with
``--big-workers``, each on a new cluster, after all runs at ``--n``;
every run is skipped, with a note, when its predicted time (from the
1-worker run and the runs already done) would pass ``--budget`` seconds, so
that a time limit ends with tables rather than nothing. Worker counts run in
the order 1, then largest to smallest. The last paragraph estimates 1e10
labels on one machine of ``--cores-per-machine`` cores and on N machines
from the run with the most blocks per worker at the largest worker count
(compute per block as measured there, its utilisation, and one scheduler at
the measured CPU per task as a floor).

Notes
-----
Results go to stdout and, with ``--out DIR``, to ``DIR/scale_workers.md``
(the tables) and ``DIR/scale_workers.jsonl`` (one JSON record per run,
written as it ends, with each worker's busy seconds and each task kind's
compute). Needs the ``dask`` extra and psutil. The 1-worker runs are never
skipped: at n = 1e8 with blocks of 1e6 and 1e7 labels they took 83 s on two
shared cores (``rr_with_prior`` and its inputs most of it); every larger
count takes a fraction of that, and ``--budget`` bounds the rest. ``--quick``
(n = 1e6, blocks of 1e5 and 5e5 labels, workers 1 and 2) takes under half a
minute on two cores.

Examples
--------
On a 16-core machine::

    python benchmarks/scale_workers.py --n 1e8 --chunks 1000000,10000000 \\
        --big-n 1e9 --budget 240 --out results/

and a smoke run::

    python benchmarks/scale_workers.py --quick
"""

import argparse
import json
import math
import os
import platform
import signal
import statistics
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import MECHANISMS, N_CLASSES, dask_graph, fmt_duration, fmt_n  # noqa: E402

TARGET_N = 10**10
INPUT_GRAPHS = ("labels", "labels+prior")  # the input-only graphs (no mechanism)
CLUSTER_START_S = 10.0  # a pessimistic guess for a cluster's start and close


def fmt_block(chunk):
    """1e6 for a power of ten, else the digits (250,000)."""
    exponent = math.log10(chunk)
    return f"1e{exponent:.0f}" if exponent.is_integer() else f"{chunk:,}"


def build(kind, n, chunk):
    """The lazy reduction of a mechanism, or of one of the input-only graphs."""
    if kind in INPUT_GRAPHS:
        return dask_graph("rr_with_prior" if kind == "labels+prior" else "randomized_response",
                          n, chunk, mechanism=False)
    return dask_graph(kind, n, chunk)


# --- measurement ---------------------------------------------------------------------


def thread_cpu(native_id):
    """User + system CPU seconds of one thread of this process (nan if not found)."""
    for thread in psutil.Process().threads():
        if thread.id == native_id:
            return thread.user_time + thread.system_time
    return math.nan


def measure(client, kind, n, chunk, n_workers, scheduler_thread, timeout):
    """One computation with its task stream; a dict of everything the tables need."""
    from dask import optimize
    from distributed import get_task_stream
    from distributed.utils import key_split

    t0 = time.time()
    graph = build(kind, n, chunk)
    n_tasks = len(optimize(graph)[0].__dask_graph__())
    t_built = time.time()
    cpu0 = thread_cpu(scheduler_thread)
    with get_task_stream(client) as stream:
        t_submit = time.time()
        future = client.compute(graph)
        t_submitted = time.time()
        future.result(timeout=timeout)
        t_done = time.time()
        cpu1 = thread_cpu(scheduler_thread)  # before the task stream is fetched
    del future

    compute_by_worker = defaultdict(float)
    intervals = defaultdict(list)  # worker -> its compute intervals
    transfer = 0.0
    by_kind = defaultdict(lambda: [0, 0.0])
    starts, stops = [], []
    for task in stream.data:
        for ss in task["startstops"]:
            duration = ss["stop"] - ss["start"]
            if ss["action"] == "compute":
                compute_by_worker[task["worker"]] += duration
                intervals[task["worker"]].append((ss["start"], ss["stop"]))
                entry = by_kind[key_split(task["key"])]
                entry[0] += 1
                entry[1] += duration
                starts.append(ss["start"])
                stops.append(ss["stop"])
            elif ss["action"] == "transfer":
                transfer += duration
    compute = sum(compute_by_worker.values())
    # Idle time of a worker between the end of one of its tasks and the start of
    # its next: the scheduler's round trip per task, or nothing ready to run.
    gaps, follow_ups = 0.0, 0
    for spans in intervals.values():
        spans.sort()
        for (_, stop), (next_start, _) in zip(spans, spans[1:], strict=False):
            gaps += max(next_start - stop, 0.0)
            follow_ups += 1
    first, last = (min(starts), max(stops)) if starts else (t_submitted, t_done)
    makespan = max(last - first, 1e-9)
    wall = t_done - t_submit
    busy = [compute_by_worker.get(w, 0.0) for w in sorted(compute_by_worker)]
    busy += [0.0] * (n_workers - len(busy))
    blocks = math.ceil(n / chunk)
    return {
        "kind": kind, "n": n, "chunk": chunk, "workers": n_workers, "blocks": blocks,
        "tasks": n_tasks, "tasks_run": len(stream.data),
        "build_s": t_built - t0, "wall_s": wall, "submit_s": t_submitted - t_submit,
        "start_s": max(first - t_submit, 0.0), "makespan_s": makespan,
        "tail_s": max(t_done - last, 0.0), "compute_s": compute,
        "utilisation": compute / (n_workers * makespan),
        "overhead": wall / makespan,
        "compute_per_block_s": compute / blocks,
        "imbalance": max(busy) / statistics.mean(busy) if compute else math.nan,
        "busy_fraction_per_worker": [b / wall for b in busy],
        "transfer_s": transfer,
        "gap_ms_per_task": 1e3 * gaps / follow_ups if follow_ups else math.nan,
        "scheduler_cpu_s": cpu1 - cpu0,
        "scheduler_cpu_ms_per_task": 1e3 * (cpu1 - cpu0) / max(len(stream.data), 1),
        "by_task_kind": {k: {"count": c, "compute_s": s} for k, (c, s) in by_kind.items()},
    }


def start_cluster(n_workers, timeout):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=None, death_timeout=timeout)
    client = Client(cluster, timeout=timeout)
    client.wait_for_workers(n_workers, timeout=timeout)
    scheduler_thread = client.run_on_scheduler(threading.get_native_id)
    return cluster, client, scheduler_thread


def warm_up(client, n_workers, chunk, timeout):
    """Every worker imports the library and runs each mechanism once (not timed)."""
    n = chunk * max(2 * n_workers, 2)
    for kind in MECHANISMS + INPUT_GRAPHS:
        client.compute(build(kind, n, chunk)).result(timeout=timeout)


# --- planning ------------------------------------------------------------------------


class Planner:
    """Predicts a run's seconds from what ran before; says whether it fits the budget."""

    def __init__(self, budget, start):
        self.budget = budget
        self.start = start
        self.done = {}  # (kind, n, chunk, workers) -> wall seconds

    def record(self, run):
        self.done[run["kind"], run["n"], run["chunk"], run["workers"]] = run["wall_s"]

    def predict(self, kind, n, chunk, workers):
        # The closest worker count at this (kind, chunk), scaled by n and by the
        # worker ratio with an efficiency of one half (pessimistic on purpose).
        best = None
        for (k, n0, c0, w0), wall in self.done.items():
            if k != kind or c0 != chunk:
                continue
            ratio = 1.0 if w0 == workers else max(w0 / workers, 0.0) * (
                2.0 if workers > w0 else 1.0)
            guess = wall * (n / n0) * ratio
            distance = (abs(math.log(w0 / workers)), abs(math.log(n / n0)))
            if best is None or distance < best[0]:
                best = (distance, guess)
        return None if best is None else best[1]

    def left(self):
        return self.budget - (time.perf_counter() - self.start)

    def fits(self, seconds):
        return seconds is None or seconds < self.left()


# --- report -------------------------------------------------------------------------


class Report:
    """Lines printed to stdout as they come and kept for the Markdown file."""

    def __init__(self):
        self.lines = []

    def __call__(self, text=""):
        print(text, flush=True)
        self.lines.append(text)

    def write(self, path):
        path.write_text("\n".join(self.lines) + "\n")


def speedup_table(report, runs, n):
    counts = sorted({r["workers"] for r in runs if r["n"] == n})
    report(f"\n### n = {fmt_n(n)}: wall time, speed-up over 1 worker and its three factors\n")
    report("speed-up = w x (C_1/C_w) x (U_w/U_1) x (O_1/O_w); C: compute seconds of all "
           "tasks, U: utilisation of the workers during the makespan, O: wall / makespan. "
           "Times in seconds; gap = a worker's idle ms between the end of one of its tasks and "
           "the start of its next (mean); sched = CPU ms per task of the scheduler's loop "
           "thread.\n")
    report("| graph | block | w | tasks | blocks/w | wall | speed-up | C_1/C_w | U_w/U_1 "
           "| O_1/O_w | U | submit | start | makespan | tail | C/block | max/mean busy "
           "| transfer | gap ms/task | sched ms/task |")
    report("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
           "|---:|---:|---:|---:|")
    index = {(r["kind"], r["chunk"], r["workers"]): r for r in runs if r["n"] == n}
    chunks = sorted({r["chunk"] for r in runs if r["n"] == n})
    for kind in MECHANISMS + INPUT_GRAPHS:
        for chunk in chunks:
            base = index.get((kind, chunk, 1))
            for w in counts:
                r = index.get((kind, chunk, w))
                if r is None:
                    continue
                if base is not None:
                    factors = (base["wall_s"] / r["wall_s"],
                               base["compute_s"] / r["compute_s"],
                               r["utilisation"] / base["utilisation"],
                               base["overhead"] / r["overhead"])
                    cells = [f"{factors[0]:.2f}x"] + [f"{f:.2f}" for f in factors[1:]]
                else:
                    cells = ["-"] * 4
                report(f"| {kind} | {fmt_block(chunk)} | {w} | {r['tasks']} | "
                       f"{r['blocks'] / w:.1f} | {r['wall_s']:.2f} | " + " | ".join(cells)
                       + f" | {r['utilisation']:.2f} | {r['submit_s']:.2f} | "
                       f"{r['start_s']:.2f} | {r['makespan_s']:.2f} | {r['tail_s']:.2f} | "
                       f"{r['compute_per_block_s'] * 1e3:.0f} ms | {r['imbalance']:.2f} | "
                       f"{r['transfer_s']:.2f} | {r['gap_ms_per_task']:.2f} | "
                       f"{r['scheduler_cpu_ms_per_task']:.2f} |")


def task_kind_table(report, runs, n):
    counts = sorted({r["workers"] for r in runs if r["n"] == n})
    if len(counts) < 2:
        return
    low, high = counts[0], counts[-1]
    report(f"\n### n = {fmt_n(n)}: mean compute ms per task, by task kind, {low} against "
           f"{high} workers\n")
    report(f"| graph | block | task kind | tasks | ms, {low} w | ms, {high} w | ratio |")
    report("|---|---:|---|---:|---:|---:|---:|")
    index = {(r["kind"], r["chunk"], r["workers"]): r for r in runs if r["n"] == n}
    for (kind, chunk, w), r in sorted(index.items()):
        if w != low or (kind, chunk, high) not in index:
            continue
        other = index[kind, chunk, high]["by_task_kind"]
        for name, entry in sorted(r["by_task_kind"].items()):
            if name not in other:
                continue
            a = 1e3 * entry["compute_s"] / entry["count"]
            b = 1e3 * other[name]["compute_s"] / other[name]["count"]
            report(f"| {kind} | {fmt_block(chunk)} | {name} | {entry['count']} | {a:.1f} | {b:.1f} "
                   f"| {b / a:.2f}x |")


def scheduler_fit(runs):
    """Per worker count: loop-thread CPU = fixed + per_task x tasks + per_second x wall.

    Least squares over the runs at that count (the thread also serves heartbeats
    and monitors, whose cost follows the wall time). Returns ``{workers:
    (fixed_s, per_task_s, per_second, n_runs)}``; with fewer than 4 runs, or a
    negative per-task term, ``per_task_s`` is the mean CPU per task and the
    other terms are 0.
    """
    fits = {}
    for w in sorted({r["workers"] for r in runs}):
        rows = [(r["tasks_run"], r["wall_s"], r["scheduler_cpu_s"]) for r in runs
                if r["workers"] == w and math.isfinite(r["scheduler_cpu_s"])]
        if not rows:
            continue
        tasks, wall, cpu = (np.array(column, dtype=float) for column in zip(*rows, strict=True))
        fit = None
        if len(rows) >= 4:
            design = np.column_stack([np.ones_like(tasks), tasks, wall])
            coef = np.linalg.lstsq(design, cpu, rcond=None)[0]
            if coef[1] > 0:
                fit = (float(coef[0]), float(coef[1]), float(coef[2]))
        if fit is None:
            fit = (0.0, float(cpu.sum() / tasks.sum()), 0.0)
        fits[w] = (*fit, len(rows))
    return fits


def scheduler_table(report, fits):
    report("\n### The scheduler's loop thread: CPU per computation, per task and per second\n")
    report("Least squares over every run at a worker count (graphs, block sizes and n "
           "differ in their task counts and lengths): CPU seconds of the thread that runs the "
           "scheduler and the client's messages = fixed + per task x tasks + per second x "
           "wall (heartbeats, monitors). psutil reads it in clock ticks (10 ms).\n")
    report("| workers | runs | fixed ms per computation | ms per task | ms per second |")
    report("|---:|---:|---:|---:|---:|")
    for w, (fixed, per_task, per_second, count) in sorted(fits.items()):
        report(f"| {w} | {count} | {fixed * 1e3:.1f} | {per_task * 1e3:.3f} | "
               f"{per_second * 1e3:.1f} |")


def estimate_table(report, runs, cores, fits):
    report(f"\n### What {fmt_n(TARGET_N)} labels would take\n")
    top = max(r["workers"] for r in runs)
    report(f"From the run with the most blocks per worker at {top} workers for each graph and "
           "block size: its compute seconds per block (contention at that count included), "
           "its utilisation U, and the scheduler's CPU per task (the marginal cost fitted "
           "below) as a floor (one scheduler for all machines). One machine = "
           f"{cores} single-threaded workers. Input generation is in the block's cost "
           "(reading real labels would replace it).\n")
    top_fit = fits.get(top)
    report("| graph | block | from | s/block | U | tasks for 1e10 | 1 machine "
           "| 10 machines | 100 machines | scheduler floor |")
    report("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind in MECHANISMS:
        for chunk in sorted({r["chunk"] for r in runs}):
            candidates = [r for r in runs if r["kind"] == kind and r["chunk"] == chunk
                          and r["workers"] == top]
            if not candidates:
                continue
            r = max(candidates, key=lambda r: r["blocks"])
            blocks = math.ceil(TARGET_N / chunk)
            tasks = blocks * r["tasks"] / r["blocks"]
            per_task = r["scheduler_cpu_ms_per_task"] / 1e3
            if top_fit is not None and top_fit[1] > 0:
                per_task = top_fit[1]  # the marginal cost, without the fixed one
            floor = tasks * per_task
            cells = []
            for machines in (1, 10, 100):
                compute = blocks * r["compute_per_block_s"] / (machines * cores
                                                               * r["utilisation"])
                mark = " (sched.)" if floor > compute else ""
                cells.append(fmt_duration(max(compute, floor)) + mark)
            report(f"| {kind} | {fmt_block(chunk)} | {fmt_n(r['n'])}, {r['blocks']} blocks | "
                   f"{r['compute_per_block_s']:.3f} | {r['utilisation']:.2f} | {tasks:,.0f} | "
                   + " | ".join(cells) + f" | {fmt_duration(floor)} |")


# --- main ---------------------------------------------------------------------------


# The command line: (flag, argparse keywords).
_OPTIONS = (
    ("--n", dict(type=float, default=1e8, help="labels per run (default 1e8)")),
    ("--chunks", dict(default="1000000,10000000", help="comma-separated labels per block")),
    ("--workers", dict(default="1,2,4,8,16",
                       help="comma-separated worker counts (1 is always run first)")),
    ("--big-n", dict(type=float, default=None,
                     help="also run this n at the largest worker count and --big-workers")),
    ("--big-workers", dict(type=int, default=8,
                           help="second worker count of the --big-n runs (default 8)")),
    ("--repeats", dict(type=int, default=1,
                       help="runs per measurement; the median wall time is kept")),
    ("--no-inputs", dict(action="store_true", help="skip the input-only graphs")),
    ("--budget", dict(type=float, default=math.inf,
                      help="seconds: skip runs predicted to end after this")),
    ("--timeout", dict(type=float, default=300.0,
                       help="seconds a cluster start or one computation may take")),
    ("--cores-per-machine", dict(type=int, default=16,
                                 help="single-threaded workers per machine in the 1e10 "
                                 "estimate")),
    ("--out", dict(type=Path, default=None,
                   help="folder for scale_workers.md and scale_workers.jsonl")),
    ("--quick", dict(action="store_true",
                     help="n = 1e6, blocks of 1e5 and 5e5, workers 1 and 2")),
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag, keywords in _OPTIONS:
        parser.add_argument(flag, **keywords)
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.chunks, args.workers = 1e6, "100000,500000", "1,2"
    args.n = int(args.n)
    args.big_n = int(args.big_n) if args.big_n else None
    args.chunks = [int(float(c)) for c in args.chunks.split(",")]
    args.workers = sorted({1, *(int(w) for w in args.workers.split(","))})
    if args.repeats < 1 or min(args.workers) < 1 or min(args.chunks) < 1:
        parser.error("--repeats, --workers and --chunks must be >= 1")
    return args


def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()
    planner = Planner(args.budget, start)
    report = Report()
    kinds = MECHANISMS + (() if args.no_inputs else INPUT_GRAPHS)
    top = args.workers[-1]
    # Worker counts: 1 first (the reference), then the largest down; the --big-n
    # runs (mechanisms only) last, each on a cluster of its own.
    order = [(w, args.n, kinds) for w in [1] + sorted(args.workers[1:], reverse=True)]
    if args.big_n:
        order.append((top, args.big_n, MECHANISMS))
        if args.big_workers in args.workers and args.big_workers != top:
            order.append((args.big_workers, args.big_n, MECHANISMS))

    cpu = platform.processor() or platform.machine()
    report(f"Dask workers 1..{top}: n = {fmt_n(args.n)}"
           + (f" (and {fmt_n(args.big_n)})" if args.big_n else "")
           + f", blocks of {', '.join(f'{c:,}' for c in args.chunks)} labels, K = {N_CLASSES}; "
           f"numpy {np.__version__}, {os.cpu_count()} CPUs ({psutil.cpu_count(logical=False)} "
           f"physical), {cpu}, {psutil.virtual_memory().total / 2**30:.0f} GiB; load average "
           f"{os.getloadavg()[0]:.1f}; budget {args.budget:g} s")
    import dask
    import distributed

    report(f"dask {dask.__version__}, distributed {distributed.__version__}, python "
           f"{platform.python_version()}")
    jsonl = None
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        jsonl = (args.out / "scale_workers.jsonl").open("w")
    runs, skipped = [], []

    def finish(note=None):
        """The tables from the runs done so far (also on SIGTERM, before exiting)."""
        if jsonl:
            jsonl.close()
        for n in sorted({r["n"] for r in runs}):
            speedup_table(report, runs, n)
            task_kind_table(report, runs, n)
        if runs:
            fits = scheduler_fit(runs)
            scheduler_table(report, fits)
            estimate_table(report, runs, args.cores_per_machine, fits)
        if skipped:
            report("\nSkipped for the budget: " + "; ".join(skipped))
        if note:
            report(f"\n{note}")
        report(f"\ntotal wall time {time.perf_counter() - start:.0f} s")
        if args.out:
            report.write(args.out / "scale_workers.md")

    def on_sigterm(signum, frame):
        raise Stopped

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        for n_workers, n, graphs in order:
            run_cluster(args, n_workers, n, graphs, planner, runs, skipped, jsonl, start)
    except Stopped:
        # A time limit (timeout(1) sends SIGTERM to the whole process group, the
        # workers included): report what was measured and leave without closing.
        finish("STOPPED by SIGTERM: the tables hold the runs finished before it.")
        os._exit(124)
    finish()


class Stopped(Exception):
    """Raised in the main thread by SIGTERM."""


def run_cluster(args, n_workers, n, graphs, planner, runs, skipped, jsonl, start):
    """Start a cluster of ``n_workers``, run every graph at ``n`` that fits, close it."""
    todo = [(n, chunk, kind) for chunk in args.chunks for kind in graphs]
    first = planner.predict(todo[0][2], todo[0][0], todo[0][1], n_workers)
    if n_workers != 1 and not planner.fits(CLUSTER_START_S + (first or 0.0)):
        skipped.append(f"{n_workers} workers at n={fmt_n(n)} (whole cluster): "
                       f"{planner.left():.0f} s left")
        return
    t_cluster = time.perf_counter()
    cluster, client, scheduler_thread = start_cluster(n_workers, args.timeout)
    try:
        warm_up(client, n_workers, min(args.chunks), args.timeout)
        print(f"[{time.perf_counter() - start:5.0f} s] {n_workers} workers up and warm in "
              f"{time.perf_counter() - t_cluster:.1f} s", flush=True)
        for _, chunk, kind in todo:
            guess = planner.predict(kind, n, chunk, n_workers)
            if guess is not None:
                guess *= args.repeats
            if n_workers != 1 and not planner.fits(guess):
                skipped.append(f"{kind} n={fmt_n(n)} block {fmt_block(chunk)} {n_workers} w: "
                               f"predicted {guess:.0f} s, {planner.left():.0f} s left")
                continue
            measured = [measure(client, kind, n, chunk, n_workers, scheduler_thread,
                                args.timeout) for _ in range(args.repeats)]
            run = sorted(measured, key=lambda r: r["wall_s"])[len(measured) // 2]
            run["repeats_wall_s"] = [r["wall_s"] for r in measured]
            runs.append(run)
            planner.record(run)
            if jsonl:
                jsonl.write(json.dumps(run) + "\n")
                jsonl.flush()
            print(f"[{time.perf_counter() - start:5.0f} s] {kind} n={fmt_n(n)} "
                  f"block {fmt_block(chunk)} w={n_workers}: wall {run['wall_s']:.2f} s, "
                  f"U {run['utilisation']:.2f}, C {run['compute_s']:.1f} s, "
                  f"{run['tasks']} tasks", flush=True)
    finally:
        t_close = time.perf_counter()
        client.close()
        cluster.close()
        print(f"[{time.perf_counter() - start:5.0f} s] {n_workers} workers closed in "
              f"{time.perf_counter() - t_close:.1f} s", flush=True)


if __name__ == "__main__":
    main()
