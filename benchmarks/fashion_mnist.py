"""Fashion-MNIST with label DP: deep nets against the published numbers.

Data: the four IDX files of Fashion-MNIST read by ``load_fashion_mnist`` from
``--data-home`` (default ``/usr/share/datasets/fashion-mnist``, installed by
``apt-get install -y dataset-fashion-mnist``; nothing is downloaded). Pixels
are scaled to [0, 1] and fed flat (784 features) to the networks.

Methods (every one passes ``classes=arange(10)``, so the label set leaks
nothing), each at each ``epsilon``:

- ``RR``: ``RRWithPriorClassifier(net, n_stages=1)`` (= LP-1ST), hard labels;
- ``LP-2ST``: ``RRWithPriorClassifier(net, n_stages=2,
  stage_fractions=STAGE_FRACTIONS, warm_start=True,
  filter_earlier_stages=True)``: the second stage's prior is the first
  stage's model, whose weights it continues to train;
- ``ALIBI``: ``ALIBIClassifier(net, n_rounds=1)``: Laplace noise on the
  one-hot labels drawn once, the net is trained with the soft cross-entropy
  on Bayes posteriors that are recomputed from its own predictions after
  every epoch (post-processing, no extra privacy cost);
- ``vector approx.``: ``VectorApproxClassifier(net)``: RAPPOR bit vectors,
  one sigmoid output per class trained with binary cross-entropy;
- ``LP-1ST+mixup`` and ``LP-2ST+mixup``: the same with mixup
  (``mixup_alpha=MIXUP_ALPHA``), the recipe of Ghazi et al. (2021);
- ``non-private``: the net on the true labels, a ceiling for reference.

``net`` is ``LabelDPNetClassifier(FashionCNN)`` (``--resnet`` swaps in
``PreActResNet18`` for the mixup methods, closer to the large Inception-style
net of Ghazi et al., 2021), trained for ``--epochs`` epochs at batch size
``BATCH_SIZE`` with Adam (lr 1e-3; ``--optimizer sgd`` for SGD with momentum
0.9, lr 0.05; ``--lr`` overrides). ``--recipe paper`` instead trains as the
appendix of Ghazi et al. (2021) says for (Fashion-)MNIST: SGD with momentum 0.9, batch size
265, 40 epochs (per stage), the rate ramped linearly from 0 to 0.02 over the
first 15% of the steps and then down to 0 (:class:`WarmupLinearDecay`);
``--epochs`` still overrides the epochs; the overhead timing then includes the
schedule's per-batch update, which the plain loop (constant rate) does not
do. The mixup methods run at eps 1 and 2 only.
Each result is printed next to the published one:

- Zhao et al. (2024), Table 1 (small CNN), eps = 0.5 / 1 / 1.5 / 2: RR,
  LP-2ST, ALIBI and vector approximation;
- Ghazi et al. (2021), Table 4 (Inception-style net with mixup; the columns are read as
  eps = 1 / 2 / 3 / 4): LP-1ST and LP-2ST. Its net is much larger than ours
  and trained far longer, so expect our numbers below these.

The run also measures the **wrapper overhead**: seconds per epoch and
throughput (images/s) of ``LabelDPNetClassifier.fit`` on hard labels against a
plain PyTorch loop training the same network (same initial weights, optimizer,
learning rate, batch size, epochs and device: shuffle with ``randperm``,
slice the batch, forward, cross-entropy, backward, step). Both are warmed up
once (not timed), then timed ``--repeats`` times alternately (so a change of
load on a shared machine hits both), and the medians are compared; the goal
is a wall-clock ratio <= 1.10. The process CPU time is compared as well: with
one torch thread it does not grow while the process waits for a core, so on a
busy machine it is the steadier measure. ``--quick`` times 5 fits of 1 epoch
on 4,000 images, the full run 5 fits of 3 epochs on all training images. The
table of methods adds each fit's time, the time per epoch, and the median
training epoch from the skorch history.

Threads: torch uses ``--threads`` CPU threads, 1 by default. On a small
machine shared with other jobs, OpenMP threads that outnumber the free cores
spin-wait on each other: on the two-core machine this was written on, a
FashionCNN training step took 8x longer with 2 threads than with 1 while other
processes were running. Give more threads on a machine of your own; on a GPU
it hardly matters.

Seeds: the training and test subsets come from one fixed permutation
(``SEED``); every (seed, method, eps) gets its own integer seed from
``SeedSequence([SEED, seed, method, eps])``, which seeds the privacy
mechanism, the stage split and the net's initialisation, shuffling, dropout
and mixup.

Run ``python benchmarks/fashion_mnist.py --device cuda`` for the full run
(60,000 training / 10,000 test images, ``FULL_EPOCHS`` epochs, 4 epsilons; a
GPU is needed: with ``--epochs 8`` all 21 fits and the overhead timing took
268 s on an NVIDIA H200 shared with other jobs, so expect about 15 minutes for
30 epochs) or ``python benchmarks/fashion_mnist.py --quick`` for a
CPU run of about ten minutes on two cores (``QUICK`` below). The figure
(accuracy against eps per method, published points hollow) goes to ``--out``
(default ``benchmarks/results/fashion_mnist.png``) and the raw results to the
same path with a ``.json`` suffix.
"""

import argparse
import json
import math
import os
import platform
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from threadpoolctl import threadpool_limits

from sklearn_labeldp import RRWithPriorClassifier
from sklearn_labeldp.classifiers import ALIBIClassifier, VectorApproxClassifier
from sklearn_labeldp.datasets import load_fashion_mnist
from sklearn_labeldp.nn import (
    FashionCNN,
    LabelDPNetClassifier,
    PreActResNet18,
    WarmupLinearDecay,
)

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "benchmarks" / "results" / "fashion_mnist.png"

SEED = 0
N_CLASSES = 10
CLASSES = np.arange(N_CLASSES)
EPSILONS = (0.5, 1.0, 1.5, 2.0)
MIXUP_EPSILONS = (1.0, 2.0)
BATCH_SIZE = 128
# Adam converges in the few epochs of --quick; the wrapper's default (plain SGD,
# lr 0.01) needs many more. --optimizer sgd uses SGD with momentum 0.9.
OPTIMIZERS = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}
DEFAULT_LR = {"adam": 1e-3, "sgd": 0.05}
FULL_EPOCHS = 30
# Ghazi et al. (2021), appendix: (Fashion-)MNIST training.
PAPER_RECIPE = {"optimizer": "sgd", "lr": 0.02, "batch_size": 265, "epochs": 40,
                "warmup_fraction": 0.15}
STAGE_FRACTIONS = (0.4, 0.6)  # a choice: Ghazi et al. tune it per data set
MIXUP_ALPHA = 1.0  # a larger alpha makes mixup more robust to label noise (a choice)
QUICK = {"n_train": 8_000, "n_test": 2_000, "epochs": 4, "eps": (1.0, 2.0), "repeats": 5,
         "overhead_n": 4_000, "overhead_epochs": 1}
FULL = {"n_train": 60_000, "n_test": 10_000, "epochs": FULL_EPOCHS, "eps": EPSILONS,
        "repeats": 5, "overhead_n": 60_000, "overhead_epochs": 3}

NONPRIVATE = "non-private"
WRAPPER, PLAIN = "LabelDPNetClassifier.fit", "plain PyTorch loop"
TABLE1 = ("RR", "LP-2ST", "ALIBI", "vector approx.")
MIXUP = ("LP-1ST+mixup", "LP-2ST+mixup")
METHODS = (NONPRIVATE,) + TABLE1 + MIXUP

# Test accuracy (%) reported by Zhao et al. (2024) and Ghazi et al. (2021).
PUBLISHED = {
    "RR": {0.5: 59.6, 1.0: 74.6, 1.5: 79.7, 2.0: 84.7},
    "LP-2ST": {0.5: 60.1, 1.0: 75.6, 1.5: 82.4, 2.0: 85.0},
    "ALIBI": {0.5: 54.3, 1.0: 79.8, 1.5: 80.1, 2.0: 84.9},
    "vector approx.": {0.5: 75.7, 1.0: 83.4, 1.5: 84.7, 2.0: 85.9},
    "LP-1ST+mixup": {1.0: 80.78, 2.0: 90.18, 3.0: 92.52, 4.0: 93.50},
    "LP-2ST+mixup": {1.0: 83.26, 2.0: 91.24, 3.0: 93.18, 4.0: 94.10},
}
SOURCE = {m: "Zhao et al. 2024, Table 1 (small CNN)" for m in TABLE1}
SOURCE.update({m: "Ghazi et al. 2021, Table 4 (Inception-style, mixup)" for m in MIXUP})


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------


def make_net(args, module, seed, *, mixup_alpha=0.0, max_epochs=None):
    """The network every method trains: ``LabelDPNetClassifier`` (Adam, or the paper's recipe)."""
    recipe = {}
    if args.recipe == "paper":
        recipe["callbacks"] = [("schedule", WarmupLinearDecay(PAPER_RECIPE["warmup_fraction"]))]
    if args.optimizer == "sgd":
        recipe["optimizer__momentum"] = 0.9
    return LabelDPNetClassifier(
        module,
        max_epochs=args.epochs if max_epochs is None else max_epochs,
        batch_size=args.batch_size,
        optimizer=OPTIMIZERS[args.optimizer],
        lr=args.lr,
        mixup_alpha=mixup_alpha,
        device=args.device,
        random_state=seed,
        # PreActResNet18 defaults to CIFAR's (3, 32, 32); both nets get the 28x28 images.
        module__input_shape=(1, 28, 28),
        **recipe,
    )


def make_model(method, eps, seed, args):
    """The estimator of ``method`` at ``eps``; ``seed`` is an int."""
    module = PreActResNet18 if args.resnet and method in MIXUP else FashionCNN
    mixup = MIXUP_ALPHA if method in MIXUP else 0.0
    net = make_net(args, module, seed, mixup_alpha=mixup)
    common = {"epsilon": eps, "classes": CLASSES, "random_state": seed}
    if method == NONPRIVATE:
        return net
    if method in ("RR", "LP-1ST+mixup"):
        return RRWithPriorClassifier(net, n_stages=1, **common)
    if method in ("LP-2ST", "LP-2ST+mixup"):
        return RRWithPriorClassifier(
            net, n_stages=2, stage_fractions=list(STAGE_FRACTIONS), warm_start=True,
            filter_earlier_stages=True, **common,
        )
    if method == "ALIBI":
        return ALIBIClassifier(net, n_rounds=1, **common)
    if method == "vector approx.":
        return VectorApproxClassifier(net, **common)
    raise ValueError(f"unknown method {method!r}")


def epochs_run(method, args):
    """Epochs the fit trains in total (each LP-2ST stage trains ``epochs`` epochs)."""
    return args.epochs * (2 if method in ("LP-2ST", "LP-2ST+mixup") else 1)


def training_epoch_seconds(model):
    """Median duration of the training epochs in the nets' skorch histories.

    skorch's epoch timer stops before later callbacks run, so this excludes
    ALIBI's per-epoch refresh, the mechanisms and predictions between stages,
    all of which the fit time includes.
    """
    nets = [model] if isinstance(model, LabelDPNetClassifier) else list(
        getattr(model, "estimators_", None) or [model.estimator_]
    )
    durations = [d for net in nets for d in net.history[:, "dur"]]
    return statistics.median(durations) if durations else float("nan")


def int_seed(seed_sequence):
    return int(seed_sequence.generate_state(1)[0] % (2**31 - 1))


# ---------------------------------------------------------------------------
# Accuracy runs
# ---------------------------------------------------------------------------


def run_methods(methods, epsilons, seeds, args, X_train, y_train, X_test, y_test):
    """results[method][eps] = list of dicts (accuracy, fit time) over seeds."""
    results = {m: {} for m in methods}
    start = time.perf_counter()
    for s in seeds:
        for method in methods:
            eps_list = [None] if method == NONPRIVATE else method_epsilons(method, epsilons)
            for eps in eps_list:
                # Keyed by (seed, method, eps), not drawn in order: running a
                # subset of methods or epsilons leaves the others' seeds alone.
                key = [SEED, s, METHODS.index(method), 0 if eps is None else round(eps * 1e6)]
                seed = int_seed(np.random.SeedSequence(key))
                model = make_model(method, eps, seed, args)
                t0 = time.perf_counter()
                try:
                    model.fit(X_train, y_train)
                    fit_s = time.perf_counter() - t0
                    acc = float(np.mean(model.predict(X_test) == y_test))
                    train_epoch_s = training_epoch_seconds(model)
                    error = None
                except Exception as exc:  # report and go on: one broken method must not
                    fit_s, acc = time.perf_counter() - t0, float("nan")  # hide the others
                    train_epoch_s = float("nan")
                    error = f"{type(exc).__name__}: {exc}"
                key = "-" if eps is None else eps
                results[method].setdefault(key, []).append(
                    {"seed": s, "accuracy": acc, "fit_s": fit_s,
                     "s_per_epoch": fit_s / epochs_run(method, args),
                     "train_s_per_epoch": train_epoch_s, "error": error}
                )
                label = f"{method}" + ("" if eps is None else f" eps={eps:g}")
                status = f"acc {100 * acc:.2f}%" if error is None else f"FAILED ({error})"
                print(f"  [{time.perf_counter() - start:6.0f}s] seed {s} {label}: {status}, "
                      f"fit {fit_s:.1f}s", flush=True)
    return results


def method_epsilons(method, epsilons):
    if method in MIXUP:
        return [e for e in epsilons if e in MIXUP_EPSILONS] or list(MIXUP_EPSILONS[:1])
    return list(epsilons)


# ---------------------------------------------------------------------------
# Wrapper overhead
# ---------------------------------------------------------------------------


def _sync(device):
    """Wait for queued GPU work, so that a timer measures it."""
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def plain_torch_fit(net, X, y, epochs, seed):
    """Train ``net``'s module class with a plain PyTorch loop, same hyperparameters.

    The module class and arguments, optimizer, learning rate, batch size and
    device are read from the fitted wrapper ``net``, and the module is built
    after the same ``manual_seed``, so both start from the same weights and
    differ only in the wrapper around the loop. The data is moved to the
    device once, as the wrapper does for in-memory arrays.
    """
    torch.manual_seed(seed)
    device = torch.device(net.device_)
    module = net.module(**net.get_params_for("module")).to(device)
    optimizer = net.optimizer(module.parameters(), lr=net.lr, **net.get_params_for("optimizer"))
    criterion = torch.nn.CrossEntropyLoss()
    X_t = torch.from_numpy(np.ascontiguousarray(X, dtype=np.float32)).to(device)
    y_t = torch.from_numpy(np.asarray(y, dtype=np.int64)).to(device)
    module.train()
    n = len(X_t)
    for _ in range(epochs):
        order = torch.randperm(n, device=device)
        for start in range(0, n, net.batch_size):
            batch = order[start:start + net.batch_size]
            optimizer.zero_grad()
            loss = criterion(module(X_t[batch]), y_t[batch])
            loss.backward()
            optimizer.step()
    _sync(device)
    return module


def measure_overhead(args, X, y, repeats, epochs):
    """Seconds per epoch (wall clock and process CPU) of the wrapper and of a plain loop.

    The CPU time of the process hardly moves when other jobs compete for the
    cores (with one torch thread, waiting costs no CPU time), so its ratio is
    the steadier of the two on a shared machine; on a GPU only the wall clock
    means anything.
    """
    seed = int_seed(np.random.SeedSequence([SEED, 999]))

    def timed(fit):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fit()
        return time.perf_counter() - wall, time.process_time() - cpu, result

    def wrapper_fit(n_epochs):
        net = make_net(args, FashionCNN, seed, max_epochs=n_epochs).fit(X, y)
        _sync(net.device_)
        return net

    # Warm-up (not timed): first CUDA/oneDNN kernels, allocator, lazy imports.
    reference = wrapper_fit(1)
    plain_torch_fit(reference, X, y, 1, seed)
    times = {name: {"wall": [], "cpu": []} for name in (WRAPPER, PLAIN)}
    for _ in range(repeats):
        # Alternate, so that a change of load on the machine hits both alike.
        for name, fit in ((WRAPPER, lambda: wrapper_fit(epochs)),
                          (PLAIN, lambda: plain_torch_fit(reference, X, y, epochs, seed))):
            wall, cpu, _ = timed(fit)
            times[name]["wall"].append(wall / epochs)
            times[name]["cpu"].append(cpu / epochs)
    return times, reference


def describe_optimizer(net):
    params = {"lr": net.lr, **net.get_params_for("optimizer")}
    return f"{net.optimizer.__name__}(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------


def summarize(runs):
    acc = [r["accuracy"] for r in runs if r["error"] is None]
    mean = 100 * statistics.fmean(acc) if acc else float("nan")
    std = 100 * statistics.stdev(acc) if len(acc) > 1 else 0.0
    return (mean, std, *(statistics.median(r[k] for r in runs)
                         for k in ("fit_s", "s_per_epoch", "train_s_per_epoch")))


def print_table(results, n_seeds):
    print(f"\nTest accuracy % (mean ± std over {n_seeds} seed(s)) next to the published one")
    print("(fit s: whole fit, median over seeds; s/epoch: fit s / epochs trained; train: "
          "median training epoch from the skorch history, without refresh or mechanism)")
    head = (f"{'method':<16}{'eps':>5}{'ours':>15}{'paper':>8}{'diff':>8}"
            f"{'fit s':>9}{'s/epoch':>9}{'train':>8}  source")
    print(head)
    print("-" * len(head))
    for method, by_eps in results.items():
        for eps, runs in by_eps.items():
            mean, std, fit_s, per_epoch, train_epoch = summarize(runs)
            paper = PUBLISHED.get(method, {}).get(eps)
            ours = f"{mean:.2f} ± {std:.2f}" if not math.isnan(mean) else "FAILED"
            paper_s = "-" if paper is None else f"{paper:.2f}"
            diff = "-" if paper is None or math.isnan(mean) else f"{mean - paper:+.2f}"
            eps_s = eps if isinstance(eps, str) else f"{eps:g}"
            print(f"{method:<16}{eps_s:>5}{ours:>15}{paper_s:>8}{diff:>8}"
                  f"{fit_s:>9.1f}{per_epoch:>9.2f}{train_epoch:>8.2f}  "
                  f"{SOURCE.get(method, 'true labels')}")
    errors = {(m, e, r["error"]) for m, by in results.items() for e, rs in by.items()
              for r in rs if r["error"]}
    for m, e, err in sorted(errors, key=str):
        print(f"  ! {m} eps={e}: {err}")


def print_overhead(times, n, epochs):
    n_repeats = len(times[WRAPPER]["wall"])
    print(f"\nWrapper overhead: {n} images, {epochs} epoch(s) per timed fit, median of "
          f"{n_repeats} repeat(s), warm-up excluded")
    medians = {name: {kind: statistics.median(v) for kind, v in by_kind.items()}
               for name, by_kind in times.items()}
    print(f"{'':<26}{'s/epoch':>9}{'images/s':>10}{'cpu s/epoch':>13}   "
          "all repeats (wall s/epoch)")
    for name, by_kind in times.items():
        m = medians[name]
        print(f"{name:<26}{m['wall']:>9.3f}{n / m['wall']:>10.0f}{m['cpu']:>13.3f}   "
              + " ".join(f"{t:.3f}" for t in by_kind["wall"]))
    ratio = {kind: medians[WRAPPER][kind] / medians[PLAIN][kind] for kind in ("wall", "cpu")}
    verdict = "MEETS" if ratio["wall"] <= 1.10 else "MISSES"
    print(f"ratio wrapper / plain (medians): wall {ratio['wall']:.3f} [{verdict} the goal "
          f"<= 1.10], process CPU time {ratio['cpu']:.3f}")
    return medians, ratio


def plot(results, out, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [("Zhao et al. 2024, Table 1: small CNN", TABLE1),
              ("Ghazi et al. 2021, Table 4: with mixup", MIXUP)]
    groups = [(t, [m for m in ms if m in results]) for t, ms in groups]
    groups = [(t, ms) for t, ms in groups if ms]
    if not groups:
        return None
    fig, axes = plt.subplots(1, len(groups), figsize=(6 * len(groups), 4.5), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (group_title, methods) in zip(axes[0], groups, strict=True):
        for i, method in enumerate(methods):
            color = colors[i % len(colors)]
            eps = sorted(results[method])
            stats = [summarize(results[method][e]) for e in eps]
            ax.errorbar(eps, [s[0] for s in stats], yerr=[s[1] for s in stats], marker="o",
                        capsize=3, color=color, label=f"{method} (ours)")
            paper = PUBLISHED[method]
            pe = sorted(paper)
            ax.plot(pe, [paper[e] for e in pe], linestyle="--", marker="s", color=color,
                    markerfacecolor="none", label=f"{method} (paper)")
        if NONPRIVATE in results:
            mean = summarize(results[NONPRIVATE]["-"])[0]
            ax.axhline(mean, color="gray", linestyle=":", label="non-private (ours)")
        ax.set_xlabel("epsilon")
        ax.set_ylabel("test accuracy (%)")
        ax.set_title(group_title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


# ---------------------------------------------------------------------------


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"CPU smoke run: {QUICK['n_train']} train / {QUICK['n_test']} test "
                        f"images, {QUICK['epochs']} epochs, eps in {list(QUICK['eps'])}")
    parser.add_argument("--device", default="auto", help='"cpu", "cuda", "cuda:1" or "auto"')
    parser.add_argument("--epochs", type=int, default=None, help="training epochs per fit")
    parser.add_argument("--n-train", type=int, default=None, help="training images used")
    parser.add_argument("--n-test", type=int, default=None, help="test images used")
    parser.add_argument("--seeds", type=int, default=1, help="seeds per (method, eps)")
    parser.add_argument("--data-home", default=None, help="folder with the four IDX files")
    parser.add_argument("--methods", default=",".join(METHODS),
                        help=f"comma-separated subset of {', '.join(METHODS)}")
    parser.add_argument("--eps", default=None, help="comma-separated epsilons")
    parser.add_argument("--recipe", choices=("adam", "paper"), default="adam",
                        help="training recipe: Adam at lr 1e-3, or that of Ghazi et al. 2021 "
                        "(SGD, momentum 0.9, batch 265, 40 epochs, warm-up then linear "
                        "decay to 0)")
    parser.add_argument("--optimizer", choices=sorted(OPTIMIZERS), default="adam")
    parser.add_argument("--lr", type=float, default=None,
                        help=f"learning rate (default {DEFAULT_LR})")
    parser.add_argument("--resnet", action="store_true",
                        help="PreActResNet18 for the mixup methods (GPU advised)")
    parser.add_argument("--repeats", type=int, default=None, help="timed overhead repeats")
    parser.add_argument("--no-overhead", action="store_true", help="skip the overhead timing")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (default 1; see the module docstring)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="PNG path; raw results go to "
                        "the same path with .json")
    args = parser.parse_args()
    mode = QUICK if args.quick else FULL
    args.batch_size = BATCH_SIZE
    if args.recipe == "paper":
        args.optimizer, args.batch_size = PAPER_RECIPE["optimizer"], PAPER_RECIPE["batch_size"]
        args.lr = PAPER_RECIPE["lr"] if args.lr is None else args.lr
        mode = {**mode, "epochs": PAPER_RECIPE["epochs"]}
    args.epochs = mode["epochs"] if args.epochs is None else args.epochs
    args.n_train = mode["n_train"] if args.n_train is None else args.n_train
    args.n_test = mode["n_test"] if args.n_test is None else args.n_test
    args.repeats = mode["repeats"] if args.repeats is None else args.repeats
    args.overhead_epochs = mode["overhead_epochs"]
    args.overhead_n = mode["overhead_n"]
    args.lr = DEFAULT_LR[args.optimizer] if args.lr is None else args.lr
    args.eps = mode["eps"] if args.eps is None else tuple(float(e) for e in args.eps.split(","))
    args.methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    unknown = [m for m in args.methods if m not in METHODS]
    if unknown:
        parser.error(f"unknown method(s) {unknown}; choose from {list(METHODS)}")
    for name in ("epochs", "n_train", "n_test", "seeds", "repeats", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if any(e <= 0 for e in args.eps):
        parser.error("--eps values must be > 0")
    return args


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    start_all = time.perf_counter()
    X_train, y_train = load_fashion_mnist(args.data_home, subset="train", return_X_y=True)
    X_test, y_test = load_fashion_mnist(args.data_home, subset="test", return_X_y=True)
    # A fixed, label-independent subset (a permutation of the indices only).
    rng = np.random.default_rng(SEED)
    train_idx = np.sort(rng.permutation(len(X_train))[: args.n_train])
    test_idx = np.sort(rng.permutation(len(X_test))[: args.n_test])
    X_train, y_train = X_train[train_idx], y_train[train_idx]
    X_test, y_test = X_test[test_idx], y_test[test_idx]

    print(f"Fashion-MNIST: {len(X_train)} train / {len(X_test)} test images; "
          f"{args.epochs} epochs, batch {args.batch_size}, recipe {args.recipe}, "
          f"eps {list(args.eps)}, "
          f"{args.seeds} seed(s); LP-2ST stages {list(STAGE_FRACTIONS)}, warm start and "
          f"filtering; mixup alpha {MIXUP_ALPHA:g}"
          f"{' with PreActResNet18' if args.resnet else ''}")
    print(f"python {platform.python_version()}, torch {torch.__version__}, device "
          f"{args.device}, {os.cpu_count()} cpus, torch threads {torch.get_num_threads()}")

    output = {"config": {k: v for k, v in vars(args).items()}, "published": {
        m: {str(e): a for e, a in p.items()} for m, p in PUBLISHED.items()}}
    # numpy's BLAS is only used for small post-processing here; keep it off the
    # cores torch is using.
    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        if not args.no_overhead:
            n_over = min(len(X_train), args.overhead_n)
            times, reference = measure_overhead(
                args, X_train[:n_over], y_train[:n_over], args.repeats, args.overhead_epochs
            )
            print(f"\nnet: FashionCNN on {reference.device_}, optimizer "
                  f"{describe_optimizer(reference)}")
            medians, ratio = print_overhead(times, n_over, args.overhead_epochs)
            output["overhead"] = {"n_images": n_over, "epochs": args.overhead_epochs,
                                  "s_per_epoch": times, "median_s_per_epoch": medians,
                                  "ratio": ratio}
            print(flush=True)
        print("Accuracy runs:")
        results = run_methods(args.methods, args.eps, range(args.seeds), args,
                              X_train, y_train, X_test, y_test)
    print_table(results, args.seeds)
    if "overhead" in output:
        ratio = output["overhead"]["ratio"]
        print(f"\nwrapper overhead, median s/epoch wrapper / plain PyTorch: wall "
              f"{ratio['wall']:.3f} (goal <= 1.10), process CPU {ratio['cpu']:.3f}")
    output["results"] = {m: {str(e): rs for e, rs in by.items()} for m, by in results.items()}
    out = plot(results, args.out, f"Fashion-MNIST, {len(X_train)} train images, "
               f"{args.epochs} epochs, {args.seeds} seed(s); paper points hollow")
    json_path = Path(args.out).with_suffix(".json")
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(output, indent=1, default=str))
    print(f"\nfigure: {out}\nraw results: {json_path}")
    print(f"total time: {time.perf_counter() - start_all:.0f}s")


if __name__ == "__main__":
    main()
