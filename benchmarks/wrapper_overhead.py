"""The network wrapper's cost per epoch and per fit against a plain PyTorch loop.

``LabelDPNetClassifier(MLP)`` (the default network of
:class:`~sklearn_labeldp.nn.DPSGDClassifier`, one hidden layer of 64) and a
plain loop (a shuffled pass: ``randperm``, slices of the batch size, forward,
cross-entropy, backward, SGD step), the two non-private fits of
``dp_sgd_timing.py``, train the same network on the same in-memory images,
each from numpy arrays to a trained module. Each is timed at 1 and at
``--epochs`` epochs, the two methods and the two lengths taking turns for
``--repeats`` rounds; the medians give

- the cost of an epoch, ``(t(E) - t(1)) / (E - 1)``: the per-batch
  bookkeeping (skorch's callbacks and history, the training mode, the batch
  iterator) against the plain loop's;
- the cost of a fit besides its epochs, ``t(1) - epoch``: the wrapper's
  input checks (a finite check of ``X``), skorch's initialisation (module,
  criterion, optimizer, callbacks), against the plain loop's module and
  tensors.

The goal for the tiny network: an epoch at most 1.10x the plain loop's. The
load average is printed beside the table; compare figures from one run.

    python benchmarks/wrapper_overhead.py [--n-train 30000] [--epochs 3] [--repeats 5]
        [--fashion-mnist] [--threads 1]
"""

import argparse
import os
import statistics
import time

import numpy as np
import torch
from dp_sgd_timing import fit_library_plain, fit_plain

SEED = 0
CPU = torch.device("cpu")
# The two non-private fits of dp_sgd_timing.py, at a number of epochs.
METHODS = {
    "LabelDPNetClassifier": lambda X, y, epochs, args: fit_library_plain(
        "mlp", X, y, args, CPU, epochs),
    "plain PyTorch": lambda X, y, epochs, args: fit_plain("mlp", X, y, args, CPU, epochs),
}


def data(args):
    if args.fashion_mnist:
        from sklearn_labeldp.datasets import load_fashion_mnist

        X, y = load_fashion_mnist(subset="train", return_X_y=True)
        return X[:args.n_train].astype(np.float32), y[:args.n_train].astype(np.int64)
    rng = np.random.default_rng(SEED)
    return (rng.random((args.n_train, 784), dtype=np.float32),
            rng.integers(0, 10, args.n_train).astype(np.int64))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=30_000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.set_defaults(device="cpu")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--fashion-mnist", action="store_true",
                        help="Fashion-MNIST's training images instead of random ones")
    args = parser.parse_args(argv)
    if args.epochs < 2:
        parser.error("--epochs must be at least 2")
    torch.set_num_threads(args.threads)
    X, y = data(args)
    times = {(name, e): [] for name in METHODS for e in (1, args.epochs)}
    for name in METHODS:  # untimed warm-up
        METHODS[name](X, y, 1, args)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
          f"{len(X)} images, batch {args.batch_size}, torch threads {args.threads}")
    for _ in range(args.repeats):
        for (name, epochs), values in times.items():
            start = time.perf_counter()
            METHODS[name](X, y, epochs, args)
            values.append(time.perf_counter() - start)
    median = {key: statistics.median(values) for key, values in times.items()}
    epoch = {name: (median[(name, args.epochs)] - median[(name, 1)]) / (args.epochs - 1)
             for name in METHODS}
    steps = -(-len(X) // args.batch_size)
    print(f"\n| method | 1-epoch fit (s) | {args.epochs}-epoch fit (s) | per epoch (s) "
          f"| ms/step | besides the epochs (s) | epoch / plain | fit / plain |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in METHODS:
        print(f"| {name} | {median[(name, 1)]:.4f} | {median[(name, args.epochs)]:.4f} "
              f"| {epoch[name]:.4f} | {1e3 * epoch[name] / steps:.3f} "
              f"| {median[(name, 1)] - epoch[name]:.4f} "
              f"| {epoch[name] / epoch['plain PyTorch']:.3f} "
              f"| {median[(name, 1)] / median[('plain PyTorch', 1)]:.3f} |")
    print(f"\nload average {os.getloadavg()[0]:.2f}; medians of {args.repeats} rounds")


if __name__ == "__main__":
    main()
