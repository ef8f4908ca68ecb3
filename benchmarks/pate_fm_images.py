"""PATE-FM on small images: FixMatch teachers and student against ALIBI.

**What is measured.** Test accuracy (median over seeds) against the label-DP
``epsilon`` in {2, 4, 8} ({4, 8} with ``--quick``) of several ways of training
the same network, ``LabelDPNetClassifier(FashionCNN)`` with Adam (every
private method passes ``classes=range(10)``, so the label set leaks nothing):

- ``PATE-FM`` (Malek et al. 2021): ``PATEClassifier`` whose teachers *and*
  student are trained with FixMatch (Sohn et al. 2020) through ``fit_semi``:
  each of ``n_teachers`` teachers learns from its part's labels plus every
  other training input unlabeled; ``n_queries`` (Q) training inputs are
  labelled by the GNMax aggregator (``delta = 1e-5``) and the student learns
  from those answers plus every training input unlabeled;
- ``PATE, plain teachers``: the same partition, queries, aggregator and
  FixMatch student, but supervised teachers (``fit`` on their part's labels
  only, no augmentation): what FixMatch teachers add;
- ``PATE-FM, Confident-GNMax`` (only with ``--confident``): the same teachers
  and student recipe with the library's default aggregator
  (``threshold=0.6``, ``sigma_ratio=2``), which leaves the queries without a
  clear noisy majority unanswered. Caveat: a FixMatch epoch is one pass over
  the labeled rows, so with fewer answers its student also takes fewer steps;
- ``ALIBI``: ``ALIBIClassifier(net, n_rounds=1)``: Laplace noise on the
  one-hot labels, Bayes posteriors refreshed after every epoch;
- references, not private: the network on all the true labels, and
  ``FixMatch, Q true labels``: the PATE student's recipe on Q random training
  inputs with their *true* labels, the best a PATE student can do with Q
  answers whatever the teachers.

A second table gives, for the PATE rows, ``n_answered_``, the accuracy of the
released labels (the answers compared with the true training labels), the
calibrated vote noise and the mean test accuracy of the teachers (read from
the memo below); these are evaluation-only quantities, computed outside the
mechanism. The first table gives the time per fit, split for PATE into the
teachers' time and the rest (aggregation and student).

Data: scikit-learn's 8x8 digits by default (a stratified 80/20 split drawn
with the seed: 1,437 training and 360 test images; pixels / 16, float32), or
``--dataset fashion``: Fashion-MNIST (``sklearn_labeldp.datasets.
load_fashion_mnist``, from the Debian package ``dataset-fashion-mnist``;
``--n-train`` training images drawn with the seed, the 10,000 test images),
with ``--device cuda`` for a full run on a GPU. Seeds: ``--seeds`` (3; 1 with
``--quick``); the seed draws the split, the PATE partition, queries and noise,
ALIBI's noise and every network's initialisation. The figure goes to
``benchmarks/results/pate_fm_<dataset>.png``.

**Hyper-parameters** (none tuned on the test labels). Network, optimiser (Adam,
lr 2e-3), no dropout, and the supervised recipe of ALIBI and of the
non-private net (15 epochs, batch 64) are those of
``benchmarks/dp_sgd_images.py``. The PATE settings come from a data-free
simulation, a small development sweep and the CPU budget:

- *Teachers and queries*: a simulation of GNMax that reads no data (teachers
  of accuracy 0.87 to 0.93 whose errors spread over the other classes, noise
  ``gnmax_sigma(eps, 1e-5, Q)``) gives the fraction of correct answers. With
  10 teachers even eps = 8 answers fewer than half of 50 queries correctly;
  with 20 teachers and Q = 50 about 85% at eps = 8, 50% at eps = 4 and 30% at
  eps = 2 (25 teachers: 95 / 67 / 35%; Q = 100 does much worse). More teachers
  help more than better ones, but each needs labels: 20 teachers get ~72
  labels each on digits, and cost time. Q = 50 (5 answers per class); with
  25 clean labels the FixMatch student was unstable in the sweep (0.70 and
  0.91 validation accuracy on two seeds).
- *GNMax for the main rows*: with 20 teachers the selection noise of
  Confident-GNMax (sigma1 = 13.5 votes at eps = 8, Q = 50) exceeds its
  threshold (0.6 x 20 = 12 votes), so the selection is mostly noise, while
  its answer noise sigma2 is about GNMax's sigma.
- *FixMatch* (teachers and student): batch 16 labeled rows,
  ``unlabeled_ratio`` mu = 2, ``fixmatch_threshold`` tau = 0.8, and a number
  of optimiser steps (``--teacher-steps`` 400, ``--student-steps`` 700;
  ``--plain-teacher-steps`` 200), from a development sweep on a 75/25 split
  of the *training* set of seed 0, two seeds (training labels read
  non-privately and not accounted). FixMatch's defaults (mu = 7, tau = 0.95)
  assume 2**20 steps: after a few hundred, tau = 0.95 still masked out 35-65%
  of the unlabeled rows. With 72 labels a supervised net reached 0.86-0.87
  validation accuracy from 250 to 600 steps; FixMatch with tau = 0.8 about
  0.87 at 300 steps and 0.91-0.94 at 600 (~6 s a fit on one core). With 50
  clean labels the FixMatch student reached 0.85-0.87 at ~530 steps,
  0.86-0.93 at ~1,070 and 0.91-0.96 at ~1,600. The step counts used are what
  an 8-minute CPU run allows (the teachers and students are the bulk of it);
  raise them on a GPU. Augmentations: the library's weak (translation) and
  strong (RandAugment + Cutout) ones, without horizontal flips on digits (a
  flipped digit is another symbol), with them on Fashion-MNIST (a mirrored
  garment is the same garment).

**Memo of the teachers.** A PATE fit with an integer ``random_state`` draws
its partition and its teachers' seeds independently of ``epsilon``, so the
teachers of one seed are the same networks at every epsilon; only the noise
and the student change. The teachers (and students) are therefore wrapped in
``MemoNet``, which returns the network fitted the first time when the same
estimator is fitted again on the same data with the same seed. Each PATE fit
is still the whole mechanism, its teachers computed once per seed instead of
once per epsilon: on the CPU ``--no-memo`` gives the same results, about
twice as slowly. The times reported are those of an unmemoised fit (the
teachers' time of a seed plus the rest), including the label-free trial fit
of a teacher and of the student that ``PATEClassifier`` runs before charging
the budget. Teachers are fitted sequentially (``n_jobs=1``: the memo lives in
the process).

**Published numbers.** Malek et al. (2021, Tables 1-2) find PATE-FM
competitive with ALIBI on CIFAR-10 at matched eps. Their PATE-FM (official
code, ``facebookresearch/label_dp_antipodes``) trains 800 WideResNet-28
FixMatch teachers for 40 epochs each, answers 250 queries by Confident-GNMax
(selection noise 800, answer noise 500, threshold 400 votes) and reports a
data-dependent eps. Here the bound is data-independent (every query paid
for) and 1,437 digit images leave 20 teachers with ~72 labels each, so expect
PATE-FM well below ALIBI at small eps, the gap closing as eps grows.

Run ``python benchmarks/pate_fm_images.py`` (about 7 minutes on one free
core of a shared two-core machine), ``--quick`` (1 seed, eps 4 and 8, about
2.5 minutes), or ``--dataset fashion --device cuda`` on a GPU. The Fashion-MNIST
defaults (50 teachers on 20,000 images, Q = 100) are a starting point, not a
tuned setting; with ``--quick`` that run took 323 s on an NVIDIA H200 shared
with other jobs.
"""

import argparse
import functools
import hashlib
import logging
import statistics
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from sklearn_labeldp import ALIBIClassifier, PATEClassifier
from sklearn_labeldp.datasets import load_fashion_mnist
from sklearn_labeldp.nn import FashionCNN, LabelDPNetClassifier, strong_augment, weak_augment

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"

EPSILONS, QUICK_EPSILONS = (2.0, 4.0, 8.0), (4.0, 8.0)
N_SEEDS = 3
DELTA = 1e-5
N_CLASSES = 10
CLASSES = np.arange(N_CLASSES)
# Per data set: teachers and queries (--n-teachers, --n-queries).
DEFAULTS = {
    "digits": {"n_teachers": 20, "n_queries": 50},
    "fashion": {"n_teachers": 50, "n_queries": 100},
}
LR = 2e-3
SUPERVISED_EPOCHS, SUPERVISED_BATCH = 15, 64  # ALIBI and non-private: dp_sgd_images.py
SEMI_BATCH = 16  # labeled rows per FixMatch step (and per plain-teacher step)
MU = 2  # unlabeled_ratio
TAU = 0.8  # fixmatch_threshold
TEACHER_STEPS, PLAIN_TEACHER_STEPS, STUDENT_STEPS = 400, 200, 700
CONF_THRESHOLD, CONF_RATIO = 0.6, 2.0  # the library's Confident-GNMax defaults

PATE_FM = "PATE-FM (GNMax)"
PATE_FM_CONF = "PATE-FM, Confident-GNMax"
PATE_PLAIN = "PATE, plain teachers (GNMax)"
ALIBI = "ALIBI"
NONPRIVATE = "non-private net (all labels)"
FM_TRUE = "FixMatch, Q true labels (non-private)"
PATE_ROWS = (PATE_FM, PATE_PLAIN)  # and PATE_FM_CONF with --confident
TEACHER_ROLE = {PATE_FM: "FixMatch teacher", PATE_FM_CONF: "FixMatch teacher",
                PATE_PLAIN: "plain teacher"}


# ---------------------------------------------------------------------------
# Memo of fitted networks
# ---------------------------------------------------------------------------


class Memo:
    """Fitted networks by (role, method, parameters, seed, data), and time spent fitting."""

    enabled = True
    fits = {}  # key -> (fitted net, role, is_trial)
    seconds = defaultdict(float)  # role -> time in real (not memoised) fits

    @classmethod
    def clear(cls):
        cls.fits.clear()


def _digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _seed_key(random_state):
    """The state a fit will draw its torch seed from, as a hashable key."""
    if isinstance(random_state, np.random.RandomState):  # PATE's DerivedRandomState seeds
        state = random_state.get_state(legacy=False)["state"]
        return _digest(state["key"], np.array([state["pos"]]))
    return repr(random_state)


def _is_trial(y):
    """Whether ``y`` are the label-free targets of PATE's trial fit (0, 1, ..., K-1, 0, ...).

    Real targets of that form are vanishingly unlikely; only used to leave
    trial fits out of the teachers' accuracy.
    """
    y = np.asarray(y)
    labeled = y[y >= 0]
    n = labeled.size
    return bool(np.array_equal(labeled, np.arange(n) % N_CLASSES) and (y[:n] >= 0).all())


class MemoNet(ClassifierMixin, BaseEstimator):
    """A classifier ``net`` whose fits are memoised: the same fit twice is computed once.

    ``role`` names it in the memo and in the timings. PATE seeds its
    ``net__random_state`` per teacher; a repeated fit with the same
    parameters, seed state and data returns the network fitted the first time.
    """

    def __init__(self, net, role="net"):
        self.net = net
        self.role = role

    def _memo_fit(self, method, X, y):
        params = self.net.get_params(deep=False)
        seed = params.pop("random_state")
        key = (self.role, method, repr(sorted(params.items(), key=lambda kv: kv[0])),
               _seed_key(seed), _digest(np.asarray(X), np.asarray(y)))
        memoise = Memo.enabled and seed is not None  # None: fresh entropy at every fit
        entry = Memo.fits.get(key) if memoise else None
        if entry is None:
            start = time.perf_counter()
            fitted = getattr(clone(self.net), method)(X, y)
            Memo.seconds[self.role] += time.perf_counter() - start
            entry = (fitted, self.role, _is_trial(y))
            if memoise:
                Memo.fits[key] = entry
        self.net_ = entry[0]
        self.classes_ = self.net_.classes_
        return self

    def fit(self, X, y):
        return self._memo_fit("fit", X, y)

    def predict(self, X):
        return self.net_.predict(X)

    def predict_proba(self, X):
        return self.net_.predict_proba(X)


class MemoSemiNet(MemoNet):
    """:class:`MemoNet` with ``fit_semi``: PATE trains it with FixMatch."""

    def fit_semi(self, X, y):
        return self._memo_fit("fit_semi", X, y)


# ---------------------------------------------------------------------------
# Data and models
# ---------------------------------------------------------------------------


def load(dataset, n_train, seed):
    if dataset == "digits":
        X, y = load_digits(return_X_y=True)
        X = (X / 16.0).astype(np.float32)
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.2, stratify=y, random_state=seed
        )
        return X_train, X_test, y_train, y_test, (1, 8, 8)
    X, y = load_fashion_mnist(subset="train", return_X_y=True)
    X_test, y_test = load_fashion_mnist(subset="test", return_X_y=True)
    rows = np.random.default_rng(seed).permutation(len(X))[:n_train]
    return X[rows], X_test, y[rows], y_test, (1, 28, 28)


def epochs_for(steps, n_labeled, batch_size):
    """Epochs giving about ``steps`` optimiser steps (an epoch is a pass over the labeled rows)."""
    per_epoch = max(1, -(-n_labeled // batch_size))
    return max(1, round(steps / per_epoch))


def network(args, shape, *, epochs, batch_size, seed=None, semi=False):
    kwargs = {}
    if semi:
        flip = args.dataset != "digits"
        kwargs = {
            "fixmatch_threshold": TAU,
            "unlabeled_ratio": MU,
            "weak_augment": functools.partial(weak_augment, flip=flip),
            "strong_augment": functools.partial(strong_augment, flip=flip),
            "image_shape": shape,
        }
    return LabelDPNetClassifier(
        FashionCNN,
        module__input_shape=shape,
        module__dropout=0.0,
        max_epochs=epochs,
        batch_size=batch_size,
        optimizer=torch.optim.Adam,
        lr=LR,
        device=args.device,
        random_state=seed,
        **kwargs,
    )


def supervised_net(args, shape, seed):
    return network(args, shape, epochs=SUPERVISED_EPOCHS, batch_size=SUPERVISED_BATCH, seed=seed)


def student_net(args, shape, seed=None):
    return network(args, shape, seed=seed, semi=True, batch_size=SEMI_BATCH,
                   epochs=epochs_for(args.student_steps, args.n_queries, SEMI_BATCH))


def make_pate(name, eps, seed, args, shape, n_train):
    semi_teacher = name != PATE_PLAIN
    steps = args.teacher_steps if semi_teacher else args.plain_teacher_steps
    teacher_epochs = epochs_for(steps, n_train // args.n_teachers, SEMI_BATCH)
    teacher = network(args, shape, epochs=teacher_epochs, batch_size=SEMI_BATCH, semi=semi_teacher)
    wrapper = MemoSemiNet if semi_teacher else MemoNet
    conf = name == PATE_FM_CONF
    return PATEClassifier(
        wrapper(teacher, role=TEACHER_ROLE[name]),
        student=MemoSemiNet(student_net(args, shape), role="student"),
        n_teachers=args.n_teachers,
        n_queries=args.n_queries,
        aggregator="confident_gnmax" if conf else "gnmax",
        threshold=CONF_THRESHOLD,
        sigma_ratio=CONF_RATIO,
        epsilon=eps,
        delta=DELTA,
        classes=CLASSES,
        random_state=seed,
        n_jobs=1,
    )


def vote_noise(params):
    if params["aggregator"] == "gnmax":
        return f"sigma {params['noise_scale']:.1f}"
    return (f"sigma1 {params['threshold_noise_scale']:.1f}, sigma2 {params['noise_scale']:.1f}, "
            f"T {params['threshold']:g}")


# ---------------------------------------------------------------------------
# Run
# ---------------------------------------------------------------------------


def pate_rows(args):
    return (PATE_FM, PATE_FM_CONF, PATE_PLAIN) if args.confident else PATE_ROWS


def run(args, epsilons, seeds):
    acc = defaultdict(list)  # (row, eps) -> scores; eps None for the non-private rows
    answered = defaultdict(list)  # (row, eps) -> n_answered_
    answer_acc = defaultdict(list)  # (row, eps) -> accuracy of the released labels
    noise = {}  # (row, eps) -> calibrated vote noise
    fit_time = defaultdict(list)  # row -> seconds per fit (PATE: without the teachers)
    teacher_time = defaultdict(list)  # teacher role -> seconds per seed
    teacher_acc = defaultdict(list)  # teacher role -> mean teacher test accuracy per seed
    caught = defaultdict(int)  # warning text -> count
    start_all = time.perf_counter()
    for seed in seeds:
        Memo.clear()
        X_train, X_test, y_train, y_test, shape = load(args.dataset, args.n_train, seed)

        start = time.perf_counter()
        acc[NONPRIVATE, None].append(supervised_net(args, shape, seed).fit(X_train, y_train)
                                     .score(X_test, y_test))
        fit_time[NONPRIVATE].append(time.perf_counter() - start)

        start = time.perf_counter()
        rows = np.random.default_rng(seed).choice(len(y_train), args.n_queries, replace=False)
        semi = np.full(len(y_train), -1)
        semi[rows] = y_train[rows]
        acc[FM_TRUE, None].append(student_net(args, shape, seed).fit_semi(X_train, semi)
                                  .score(X_test, y_test))
        fit_time[FM_TRUE].append(time.perf_counter() - start)

        spent = {}  # teacher role -> time to train its teachers (and trial fit) once
        for eps in epsilons:
            for name in pate_rows(args):
                role = TEACHER_ROLE[name]
                before = Memo.seconds[role]
                start = time.perf_counter()
                with warnings.catch_warnings(record=True) as record:
                    warnings.simplefilter("always")
                    est = make_pate(name, eps, seed, args, shape, len(y_train))
                    est.fit(X_train, y_train)
                for w in record:
                    caught[f"{w.category.__name__}: {str(w.message)[:160]}"] += 1
                teachers = Memo.seconds[role] - before
                spent.setdefault(role, teachers)  # the first fit of a seed trains them
                fit_time[name].append(time.perf_counter() - start - teachers)
                acc[name, eps].append(est.score(X_test, y_test))
                answered[name, eps].append(est.n_answered_)
                answer_acc[name, eps].append(
                    float(np.mean(est.answered_labels_ == y_train[est.answered_indices_])))
                noise[name, eps] = vote_noise(est.mechanism_params_)
            start = time.perf_counter()
            alibi = ALIBIClassifier(supervised_net(args, shape, seed), epsilon=eps, n_rounds=1,
                                    classes=CLASSES, random_state=seed)
            acc[ALIBI, eps].append(alibi.fit(X_train, y_train).score(X_test, y_test))
            fit_time[ALIBI].append(time.perf_counter() - start)
        for role, seconds in spent.items():
            teacher_time[role].append(seconds)
            nets = [net for net, r, trial in Memo.fits.values() if r == role and not trial]
            if nets:  # empty with --no-memo
                teacher_acc[role].append(float(np.mean([n.score(X_test, y_test) for n in nets])))
        print(f"seed {seed} done ({time.perf_counter() - start_all:.0f} s)", file=sys.stderr,
              flush=True)
    return {
        "acc": acc, "answered": answered, "answer_acc": answer_acc, "noise": noise,
        "fit_time": fit_time, "teacher_time": teacher_time, "teacher_acc": teacher_acc,
        "caught": caught, "n_train": len(y_train), "n_test": len(y_test),
    }


def med(values):
    return statistics.median(values)


def markdown_table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def report(res, args, epsilons, n_seeds):
    acc, fit_time, teacher_time = res["acc"], res["fit_time"], res["teacher_time"]
    n_teachers, n_queries = args.n_teachers, args.n_queries
    print(f"\n{args.dataset}: {res['n_train']} training / {res['n_test']} test images; "
          f"FashionCNN, Adam lr {LR:g}; {n_teachers} teachers (~{res['n_train'] // n_teachers} "
          f"labels each), {n_queries} queries, delta {DELTA:g}; FixMatch batch {SEMI_BATCH}, "
          f"mu {MU}, tau {TAU:g}; steps: {args.teacher_steps} FixMatch teacher, "
          f"{args.plain_teacher_steps} plain teacher, {args.student_steps} student; median of "
          f"{n_seeds} seed(s)\n")
    eps_cols = [f"eps={e:g}" for e in epsilons]
    rows = []
    for name in (*pate_rows(args), ALIBI):
        cells = [f"{med(acc[name, e]):.3f}" for e in epsilons]
        if name != ALIBI:
            t_teach, t_rest = med(teacher_time[TEACHER_ROLE[name]]), med(fit_time[name])
            cells.append(f"{t_teach + t_rest:.1f} ({t_teach:.1f} + {t_rest:.1f})")
        else:
            cells.append(f"{med(fit_time[name]):.1f}")
        rows.append([name, *cells])
    for name in (FM_TRUE, NONPRIVATE):
        rows.append([name, *[f"{med(acc[name, None]):.3f}"] * len(epsilons),
                     f"{med(fit_time[name]):.1f}"])
    markdown_table(["method", *eps_cols, "time per fit, s (PATE: teachers + rest)"], rows)

    print(f"\nPATE: median n_answered_ of {n_queries} queries [accuracy of the released labels]"
          "; the calibrated vote noise; mean test accuracy of the teachers\n")
    rows = []
    for name in pate_rows(args):
        cells = [f"{med(res['answered'][name, e]):g} [{med(res['answer_acc'][name, e]):.2f}]"
                 f" ({res['noise'][name, e]})" for e in epsilons]
        t_acc = res["teacher_acc"].get(TEACHER_ROLE[name])
        rows.append([name, *cells, f"{med(t_acc):.3f}" if t_acc else "n/a (--no-memo)"])
    markdown_table(["method", *eps_cols, "teacher acc"], rows)
    drowned = [f"{e:g}" for e in epsilons
               if float(res["noise"][PATE_FM, e].split()[1]) > n_teachers / 2]
    if drowned:
        print(f"\nAt eps = {', '.join(drowned)} the GNMax noise exceeds half the number of "
              f"teachers ({n_teachers / 2:g} votes): PATEClassifier warns that most answers "
              "will be noise.")
    if res["caught"]:
        print("\nWarnings raised by the PATE fits (count):")
        for text, count in sorted(res["caught"].items()):
            print(f"  {count} x {text}")


def plot(res, args, epsilons):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    acc = res["acc"]
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for i, name in enumerate((*pate_rows(args), ALIBI)):
        ax.plot(epsilons, [med(acc[name, e]) for e in epsilons], marker="osD^"[i], label=name,
                ls="--" if name == ALIBI else "-")
    ax.axhline(med(acc[FM_TRUE, None]), color="tab:gray", ls="-.", lw=1, label=FM_TRUE)
    ax.axhline(med(acc[NONPRIVATE, None]), color="k", ls=":", label=NONPRIVATE)
    ax.set_xscale("log", base=2)
    ax.set_xticks(epsilons, [f"{e:g}" for e in epsilons])
    ax.set_xticks([], minor=True)
    ax.set_xlabel(f"label-DP epsilon (delta = {DELTA:g} for PATE)")
    ax.set_ylabel("test accuracy (median over seeds)")
    ax.set_title(f"PATE-FM vs ALIBI ({args.dataset})")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out = RESULTS / f"pate_fm_{args.dataset}.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--dataset", choices=("digits", "fashion"), default="digits")
    parser.add_argument("--n-train", type=int, default=20_000,
                        help="Fashion-MNIST training images (default: %(default)s)")
    parser.add_argument("--n-teachers", type=int, default=None,
                        help="default: 20 on digits, 50 on Fashion-MNIST")
    parser.add_argument("--n-queries", type=int, default=None,
                        help="default: 50 on digits, 100 on Fashion-MNIST")
    parser.add_argument("--teacher-steps", type=int, default=TEACHER_STEPS)
    parser.add_argument("--plain-teacher-steps", type=int, default=PLAIN_TEACHER_STEPS)
    parser.add_argument("--student-steps", type=int, default=STUDENT_STEPS)
    parser.add_argument("--confident", action="store_true",
                        help="add PATE-FM with Confident-GNMax (same teachers, one more student "
                        "per eps)")
    parser.add_argument("--seeds", type=int, default=N_SEEDS)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-memo", action="store_true",
                        help="refit the teachers at every epsilon (same results, ~3x slower)")
    parser.add_argument("--quick", action="store_true", help="one seed, eps 4 and 8")
    args = parser.parse_args()
    for key, value in DEFAULTS[args.dataset].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    torch.set_num_threads(args.threads)
    logging.disable(logging.WARNING)
    Memo.enabled = not args.no_memo
    epsilons = QUICK_EPSILONS if args.quick else EPSILONS
    seeds = range(1 if args.quick else args.seeds)

    start = time.perf_counter()
    res = run(args, epsilons, seeds)
    report(res, args, epsilons, len(seeds))
    try:
        out = plot(res, args, epsilons)
    except ImportError as exc:
        print(f"\nfigure: not drawn ({exc}); pip install matplotlib")
    else:
        print(f"\nfigure: {out}")
    print(f"total time: {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
