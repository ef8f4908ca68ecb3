"""Seconds per DP-SGD training epoch: DPSGDClassifier against Opacus's own loop and a plain one.

``--epochs`` epochs (3) on Fashion-MNIST's training images (``--n-train``, all
60,000 by default), expected batch size ``--batch-size`` (256), SGD at
``--lr``, for each network of ``--nets``: ``mlp``
(:class:`~sklearn_labeldp.nn.MLP`, one hidden layer of 64) and ``cnn``
(:class:`~sklearn_labeldp.nn.FashionCNN`). The ways to train it, the data
on the device in every one:

- ``library DP-SGD``: ``DPSGDClassifier(LabelDPNetClassifier(net,
  max_epochs=epochs, batch_size=256), epsilon, delta, classes=range(10)).fit``
  from numpy arrays: its checks, its label-free trial fit on a few rows, the
  calibration of the noise (cached after the first fit), the Poisson batches
  and the noise (from two Philox generators on a CUDA device, from the numpy
  generator on the CPU), ghost clipping where it covers every layer (the MLP)
  or Opacus's per-sample gradients (the CNN), and the rebuild of the
  released network;
- ``library DP-SGD (per-sample)`` (``mlp`` only): the same fit with ghost
  clipping switched off (per-sample gradients, as before ghost clipping);
- ``Opacus make_private``: Opacus's documented loop: ``PrivacyEngine().
  make_private`` on the module, the optimizer and a ``DataLoader`` over a
  ``TensorDataset`` of the tensors on the device (its Poisson sampler, its
  noise drawn on the device), at the noise multiplier the library
  calibrated, so both do the same arithmetic;
- ``library non-private``: ``LabelDPNetClassifier(net, max_epochs=epochs,
  batch_size=256).fit``, the library's network wrapper without DP;
- ``plain PyTorch``: a shuffled pass (``randperm`` on the device, slices of
  the batch size), forward, cross-entropy, backward, step.

An epoch's time is that of one training epoch, the device synchronised at
its start and end (the library's epochs are timed by wrapping the epoch loop
of :mod:`sklearn_labeldp.nn._training`; the trial fit's short epoch is not
counted); the table gives the median over every epoch of ``--repeats`` runs
of each method in turn, after one untimed first run (CUDA kernels, cuDNN's
choices and the accounting's cache are warmed there), the milliseconds per
optimizer step (the Poisson loops take ``ceil(1/q)`` steps, Opacus's
``int(1/q)``) and the ratios to the plain loop's and to Opacus's epoch. The
rest of a library fit (its checks, trial fit, calibration and rebuild) is
the fit's time less its epochs', reported beside. The accounting's
calibration
(:func:`~sklearn_labeldp.accounting.calibrate_dp_sgd_label_change`, cached
by argument) is timed on its own once before any fit: a fresh process pays it
once per setting, inside its first fit. ``--profile`` writes a cProfile of
one more library DP-SGD fit per network (the functions with the largest
cumulative and own times).

Notes
-----
Needs the ``dp-sgd`` extra (torch, skorch, Opacus, dp-accounting) and the
Fashion-MNIST training files (``--data-home``, default that of
:func:`~sklearn_labeldp.datasets.load_fashion_mnist`; ``--synthetic``
uses random images of the same shape instead). Tables go to stdout and, with
``--out DIR``, to ``DIR/dp_sgd_timing.md`` and ``DIR/dp_sgd_timing.json``
(and ``DIR/dp_sgd_profile.txt``). Without a GPU use ``--quick`` (4,000
images, 2 epochs, 1 repeat).

Examples
--------
::

    python benchmarks/dp_sgd_timing.py --device cuda --out results/ --profile
    python benchmarks/dp_sgd_timing.py --quick --synthetic
"""

import argparse
import cProfile
import io
import json
import math
import os
import platform
import pstats
import signal
import statistics
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import torch

from sklearn_labeldp.accounting import calibrate_dp_sgd_label_change
from sklearn_labeldp.datasets import load_fashion_mnist
from sklearn_labeldp.nn import (
    MLP,
    DPSGDClassifier,
    FashionCNN,
    LabelDPNetClassifier,
    _dp_sgd,
    _training,
)

N_CLASSES = 10
SEED = 0
NETS = {"mlp": MLP, "cnn": FashionCNN}
LIBRARY_DP, PER_SAMPLE, OPACUS, LIBRARY_PLAIN, PLAIN = (
    "library DP-SGD", "library DP-SGD (per-sample)", "Opacus make_private",
    "library non-private", "plain PyTorch")
METHODS = (LIBRARY_DP, PER_SAMPLE, OPACUS, LIBRARY_PLAIN, PLAIN)


class EpochClock:
    """The training epochs' durations of the fit running now, the device synchronised."""

    def __init__(self):
        self.device = None
        self.steps = None  # the library's steps per full epoch
        self.epochs = []

    @contextmanager
    def epoch(self):
        sync(self.device)
        start = time.perf_counter()
        yield
        sync(self.device)
        self.epochs.append(time.perf_counter() - start)


CLOCK = EpochClock()
_library_epoch = _training._run_epoch


def _timed_library_epoch(net, iterator, training, prefix, step_fn, **fit_params):
    """The library's epoch loop, each full-size training epoch timed by CLOCK."""
    full = training and iterator is not None and len(iterator) == CLOCK.steps
    if not full:  # a validation pass, or the trial fit's short epoch
        return _library_epoch(net, iterator, training, prefix, step_fn, **fit_params)
    with CLOCK.epoch():
        return _library_epoch(net, iterator, training, prefix, step_fn, **fit_params)


def sync(device):
    if device is not None and device.type == "cuda":
        torch.cuda.synchronize(device)


def new_module(name, device):
    """The module with materialised parameters (MLP's lazy layers run once on a dummy batch)."""
    module = NETS[name](n_outputs=N_CLASSES).to(device)
    with torch.no_grad():
        module(torch.zeros(2, 784, device=device))
    return module


def library_net(name, args, epochs):
    return LabelDPNetClassifier(NETS[name], max_epochs=epochs, batch_size=args.batch_size,
                                lr=args.lr, optimizer=torch.optim.SGD, device=args.device,
                                random_state=SEED)


def fit_library_dp(name, X, y, args, device, epochs=1, ghost=True):
    clf = DPSGDClassifier(library_net(name, args, epochs), epsilon=args.epsilon,
                          delta=args.delta, max_grad_norm=args.clip, classes=range(N_CLASSES),
                          random_state=SEED)
    if ghost:
        clf.fit(X, y)
    else:
        with mock.patch.object(_dp_sgd, "ghost_clippable", lambda module: False):
            clf.fit(X, y)
    sync(device)
    return clf.mechanism_params_["n_noisy_steps"]


def fit_library_plain(name, X, y, args, device, epochs=1):
    net = library_net(name, args, epochs)
    net.fit(X, y)
    sync(device)
    return epochs * math.ceil(len(X) / args.batch_size)


def fit_plain(name, X, y, args, device, epochs=1):
    torch.manual_seed(SEED)
    module = new_module(name, device)
    optimizer = torch.optim.SGD(module.parameters(), lr=args.lr)
    criterion = torch.nn.CrossEntropyLoss()
    X_t = torch.from_numpy(X).to(device)
    y_t = torch.from_numpy(y).to(device)
    module.train()
    steps = 0
    for _ in range(epochs):
        with CLOCK.epoch():
            order = torch.randperm(len(X_t), device=device)
            for start in range(0, len(X_t), args.batch_size):
                batch = order[start:start + args.batch_size]
                optimizer.zero_grad()
                criterion(module(X_t[batch]), y_t[batch]).backward()
                optimizer.step()
                steps += 1
    sync(device)
    return steps


def fit_opacus(name, X, y, args, device, noise_multiplier, epochs=1):
    from opacus import PrivacyEngine

    torch.manual_seed(SEED)
    module = new_module(name, device)
    for layer in module.modules():  # Opacus's hooks refuse in-place activations
        if getattr(layer, "inplace", False):
            layer.inplace = False
    optimizer = torch.optim.SGD(module.parameters(), lr=args.lr)
    X_t = torch.from_numpy(X).to(device)
    y_t = torch.from_numpy(y).to(device)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X_t, y_t),
                                         batch_size=args.batch_size)
    engine = PrivacyEngine()
    module, optimizer, loader = engine.make_private(
        module=module, optimizer=optimizer, data_loader=loader,
        noise_multiplier=noise_multiplier, max_grad_norm=args.clip, poisson_sampling=True)
    criterion = torch.nn.CrossEntropyLoss()
    module.train()
    steps = 0
    for _ in range(epochs):
        with CLOCK.epoch():
            for xb, yb in loader:
                optimizer.zero_grad()
                criterion(module(xb), yb).backward()
                optimizer.step()
                steps += 1
    sync(device)
    return steps


def timed(function):
    start = time.perf_counter()
    steps = function()
    return time.perf_counter() - start, steps


def profile_fit(function, top=30):
    profiler = cProfile.Profile()
    profiler.enable()
    function()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def load(args):
    if args.synthetic:
        rng = np.random.default_rng(SEED)
        X = rng.random((args.n_train, 784), dtype=np.float32)
        return X, rng.integers(N_CLASSES, size=args.n_train)
    X, y = load_fashion_mnist(args.data_home, subset="train", return_X_y=True)
    return np.ascontiguousarray(X[:args.n_train]), y[:args.n_train]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", help='"cuda", "cpu" or "auto"')
    parser.add_argument("--nets", default="mlp,cnn", help="comma-separated among mlp, cnn")
    parser.add_argument("--n-train", type=int, default=60_000, help="training images")
    parser.add_argument("--batch-size", type=int, default=256, help="(expected) batch size")
    parser.add_argument("--lr", type=float, default=0.1, help="SGD learning rate")
    parser.add_argument("--epsilon", type=float, default=1.0, help="label-DP epsilon")
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--clip", type=float, default=1.0, help="max_grad_norm")
    parser.add_argument("--epochs", type=int, default=3, help="training epochs per fit")
    parser.add_argument("--repeats", type=int, default=3, help="timed fits per method")
    parser.add_argument("--methods", default=",".join(METHODS),
                        help="comma-separated subset of: " + ", ".join(METHODS))
    parser.add_argument("--data-home", default=None, help="folder of the IDX files")
    parser.add_argument("--synthetic", action="store_true", help="random images instead")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile one more library DP-SGD fit per network")
    parser.add_argument("--out", type=Path, default=None, help="folder for the result files")
    parser.add_argument("--quick", action="store_true",
                        help="4,000 images, 2 epochs, 1 repeat")
    args = parser.parse_args(argv)
    if args.quick:
        args.n_train, args.epochs, args.repeats = min(args.n_train, 4_000), 2, 1
    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    args.nets = [n.strip() for n in args.nets.split(",") if n.strip()]
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    bad = [n for n in args.nets if n not in NETS] + [m for m in args.methods if m not in METHODS]
    if bad:
        parser.error(f"unknown nets or methods: {bad}")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    warnings.filterwarnings("ignore", category=UserWarning)
    start_all = time.perf_counter()
    lines = []

    def report(text=""):
        print(text, flush=True)
        lines.append(text)

    X, y = load(args)
    X = X.astype(np.float32, copy=False)
    y = y.astype(np.int64, copy=False)
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor()
    import opacus
    import skorch

    report(f"DP-SGD epoch timing: {len(X)} {'synthetic' if args.synthetic else 'Fashion-MNIST'} "
           f"images, expected batch {args.batch_size}, SGD lr {args.lr}, eps {args.epsilon}, "
           f"delta {args.delta}, clip {args.clip}; device {device} ({gpu}); torch "
           f"{torch.__version__}, opacus {opacus.__version__}, skorch {skorch.__version__}, "
           f"python {platform.python_version()}, {os.cpu_count()} CPUs, torch threads "
           f"{torch.get_num_threads()}")

    sample_rate = args.batch_size / len(X)
    steps = math.ceil(1 / sample_rate)
    t0 = time.perf_counter()
    noise_multiplier, label_eps, example_eps = calibrate_dp_sgd_label_change(
        args.epsilon, args.delta, sample_rate, steps)
    calibration_s = time.perf_counter() - t0
    report(f"calibration (first call; cached afterwards): {calibration_s:.2f} s for q = "
           f"{sample_rate:.5f}, {steps} steps: noise multiplier {noise_multiplier:.4f} (label "
           f"eps {label_eps:.3f}, example eps {example_eps:.3f})")

    E = args.epochs
    functions = {
        LIBRARY_DP: lambda name: fit_library_dp(name, X, y, args, device, E),
        PER_SAMPLE: lambda name: fit_library_dp(name, X, y, args, device, E, ghost=False),
        OPACUS: lambda name: fit_opacus(name, X, y, args, device, noise_multiplier, E),
        LIBRARY_PLAIN: lambda name: fit_library_plain(name, X, y, args, device, E),
        PLAIN: lambda name: fit_plain(name, X, y, args, device, E),
    }
    CLOCK.device, CLOCK.steps = device, steps
    results = {}
    profiles = []

    def run(name, method):
        """One fit: its total seconds, its epochs' seconds and its steps."""
        CLOCK.epochs = []
        seconds, steps_run = timed(lambda: functions[method](name))
        return seconds, list(CLOCK.epochs), steps_run

    def methods_for(name):
        # Ghost clipping covers the MLP's layers only: the CNN has no second library fit.
        return [m for m in args.methods if not (m == PER_SAMPLE and name != "mlp")]

    def run_all():
        for name in args.nets:
            for method in methods_for(name):  # untimed first runs: the warm-up
                seconds, epochs, steps_run = run(name, method)
                results[name, method] = {"first_s": seconds, "steps": steps_run // E,
                                         "epochs_s": [], "rest_s": []}
                print(f"  [{time.perf_counter() - start_all:5.0f} s] {name} {method} first: "
                      f"{seconds:.2f} s ({len(epochs)} epochs timed)", flush=True)
            for _ in range(args.repeats):
                for method in methods_for(name):
                    seconds, epochs, _ = run(name, method)
                    results[name, method]["epochs_s"].extend(epochs)
                    results[name, method]["rest_s"].append(seconds - sum(epochs))
            if args.profile and LIBRARY_DP in args.methods:
                profiles.append(f"===== {name}: {LIBRARY_DP} fit =====\n"
                                + profile_fit(lambda n=name: functions[LIBRARY_DP](n)))
            print(f"  [{time.perf_counter() - start_all:5.0f} s] {name} done", flush=True)

    def on_sigterm(signum, frame):
        raise Stopped

    signal.signal(signal.SIGTERM, on_sigterm)
    stopped = False
    try:
        with mock.patch.object(_training, "_run_epoch", _timed_library_epoch):
            run_all()
    except Stopped:  # a time limit: the tables of what finished, then exit
        stopped = True

    report(f"\n### Seconds per training epoch: median of the {E} epochs of {args.repeats} "
           "fits (after one untimed first fit)\n")
    report("| net | method | epochs | median epoch (s) | min (s) | steps | ms/step | images/s "
           "| / plain | / Opacus | rest of the fit (s) |")
    report("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def median_epoch(name, method):
        r = results.get((name, method))
        return statistics.median(r["epochs_s"]) if r and r["epochs_s"] else None

    for (name, method), r in results.items():
        median = median_epoch(name, method)
        r["median_epoch_s"] = median
        if median is None:
            report(f"| {name} | {method} | 0 | - | - | {r['steps']} | - | - | - | - | - |")
            continue
        ratios = [f"{median / base:.2f}x" if base else "-"
                  for base in (median_epoch(name, PLAIN), median_epoch(name, OPACUS))]
        rest = (f"{statistics.median(r['rest_s']):.2f}"
                if method in (LIBRARY_DP, PER_SAMPLE, LIBRARY_PLAIN) else "-")
        report(f"| {name} | {method} | {len(r['epochs_s'])} | {median:.3f} | "
               f"{min(r['epochs_s']):.3f} | {r['steps']} | {1e3 * median / r['steps']:.2f} | "
               f"{len(X) / median:,.0f} | {ratios[0]} | {ratios[1]} | {rest} |")
    if stopped:
        report("\nSTOPPED by SIGTERM: the table holds what finished before it (runs = 0: the "
               "first run only).")
    report(f"\ntotal wall time {time.perf_counter() - start_all:.0f} s")

    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "dp_sgd_timing.md").write_text("\n".join(lines) + "\n")
        payload = {"config": {k: str(v) if isinstance(v, Path) else v
                              for k, v in vars(args).items()},
                   "device_name": gpu, "calibration_s": calibration_s,
                   "noise_multiplier": noise_multiplier,
                   "results": [{"net": n, "method": m, **r} for (n, m), r in results.items()]}
        (args.out / "dp_sgd_timing.json").write_text(json.dumps(payload, indent=1))
        if profiles:
            (args.out / "dp_sgd_profile.txt").write_text("\n".join(profiles))
    if stopped:
        os._exit(124)


class Stopped(Exception):
    """Raised in the main thread by SIGTERM."""


if __name__ == "__main__":
    main()
