"""PATEClassifier's "auto" aggregator and student: the rule's sweeps and its before/after tables.

"Old" is the former default, ``PATEClassifier(LogisticRegression(), student=None,
aggregator="confident_gnmax")``: logistic-regression teachers and a clone of them
as the student, Confident-GNMax (``threshold=0.6``, ``sigma_ratio=2``). "New" is
``PATEClassifier()``: ``aggregator="auto"`` (GNMax), ``student="auto"`` (a
self-training logistic regression on standardised features, class weights
balanced when the teachers' parts hold fewer than ``10 K`` rows) and
``LogisticRegression(class_weight="balanced")`` teachers. Both resolve
``n_teachers`` and ``n_queries`` by the same "auto" rule, ``delta = 1e-5``,
``classes`` given, ``random_state`` = the seed. Every cell is a median over
``--seeds`` splits, stratified, features standardised on the training part
unless said otherwise; a cell "a / b" is accuracy / balanced accuracy (the mean
of the per-class recalls: 0.5 for a model that predicts the majority class of
two).

Tables:

- ``digits``: scikit-learn's digits, 75/25 splits (seeds 0-4 by default), raw and
  standardised features, epsilon 1, 2, 4, 8: old, old with GNMax, new with
  Confident-GNMax, new (the headline: ``PATEClassifier(epsilon=8)``);
- ``aggregator``: the rule's sweep for the aggregator, on the data sets the rule
  was set on (the digits, 70/30, and five synthetic sets of 300-600 training
  rows, one 85/15 imbalanced): GNMax against Confident-GNMax, with the new
  teachers and the "auto" student or a logistic-regression student, at the
  "auto" counts (epsilon 1 to 8) and at counts where the selection is
  informative (30 teachers, 50 queries, epsilon 8 and 16);
- ``student``: the rule's sweep for the student on the same sets (GNMax, new
  teachers, epsilon 2, 4, 8): logistic regression (the old student), the same
  balanced, self-training around either, and ``LabelSpreading`` (Zhou et al.
  2004, k-NN graph, 7 neighbours);
- ``weights``: the rule's sweep for the class weights, on imbalanced data at
  forced teacher counts (5 to 80 rows a part): no weights, balanced teachers,
  balanced teachers and student; with ``--adult``, UCI Adult too (1 seed);
- ``floor``: the count rule's floor on a part's rows (``max(5, 2 K)``)
  raised to 10 and 20, with the new defaults otherwise, on the synthetic
  development sets and a 90/10 one (epsilon 1 to 8): what fewer, larger parts
  do to imbalanced and to balanced data (the rule keeps 5);
- ``heldout``: sets below 500 rows that the rule was not set on (wine, iris,
  400 rows of breast cancer, a 3-class and a 90/10 ``make_classification``,
  and 100 rows of a 2-class one: the accepted limit), epsilon 1, 2, 4, 8,
  old against new against the non-private ``LogisticRegression``, with the
  majority rate (default 9 seeds);
- ``adult``: UCI Adult (read in place from ``--data-dir``), old against new,
  epsilon 0.5 to 8 (default 3 seeds): the large-data side of the rule;
- ``abstain``: a teacher whose part holds one class voting that class on
  every query (before) against abstaining (now), ``PATEClassifier()``
  otherwise, on imbalanced sets (85/15 and 90/10 of 301 rows, 85/15 of 2,000)
  and balanced controls, epsilon 1 to 8 (default 9 seeds).

Usage (times measured on 2 shared cores)::

    nice python benchmarks/pate_defaults.py digits              # ~1.5 min
    nice python benchmarks/pate_defaults.py aggregator          # ~4 min
    nice python benchmarks/pate_defaults.py student             # ~1.5 min
    nice python benchmarks/pate_defaults.py weights [--adult]   # ~1 min (~2.5 with Adult)
    nice python benchmarks/pate_defaults.py floor               # ~1 min
    nice python benchmarks/pate_defaults.py heldout             # ~1 min
    nice python benchmarks/pate_defaults.py adult               # ~1 min
    nice python benchmarks/pate_defaults.py abstain             # ~5 min

Each prints one or two Markdown tables; BLAS pools are limited to one thread
and the teachers run in one job.
"""

import argparse
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
from defaults_small import _subsample, _table
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_iris,
    load_wine,
    make_classification,
)
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import LabelSpreading, SelfTrainingClassifier
from threadpoolctl import threadpool_limits

from sklearn_labeldp import PATEClassifier
from sklearn_labeldp.classifiers import _pate
from sklearn_labeldp.datasets import load_adult, make_circle_gaussians

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = REPO.parent / "shared" / "data" / "adult"
DELTA = 1e-5
EPSILONS = (1.0, 2.0, 4.0, 8.0)
N_JOBS = 1


def _old(**kw):
    return PATEClassifier(LogisticRegression(), student=None, aggregator="confident_gnmax",
                          **kw)


def _new(**kw):
    return PATEClassifier(**kw)


def _scaled(model):
    return make_pipeline(StandardScaler(), model)


def _lr(weights=None):
    return LogisticRegression(class_weight=weights)


# The sets the rule was set on: name -> seed -> (X, y); 70/30 splits.
DEVELOPMENT = {
    "digits (1257)": lambda seed: load_digits(return_X_y=True),
    "synthetic K=2 (301)": lambda seed: make_classification(
        430, n_features=10, n_informative=5, n_classes=2, random_state=100 + seed),
    "synthetic K=3 (301)": lambda seed: make_classification(
        430, n_features=10, n_informative=5, n_classes=3, random_state=100 + seed),
    "synthetic K=5 (602)": lambda seed: make_classification(
        860, n_features=15, n_informative=8, n_classes=5, n_clusters_per_class=1,
        random_state=100 + seed),
    "circles K=4 (399)": lambda seed: make_circle_gaussians(570, 4, sigma=0.4,
                                                             random_state=100 + seed),
    "85/15 K=2 (301)": lambda seed: make_classification(
        430, n_features=10, n_informative=5, weights=[0.85], random_state=100 + seed),
}

# Imbalanced sets of the class-weight sweep: name -> (seed -> (X, y), epsilon).
IMBALANCED = {
    "85/15 K=2 (301)": (DEVELOPMENT["85/15 K=2 (301)"], 8.0),
    "85/15 K=2 (2000)": (lambda seed: make_classification(
        2858, n_features=10, n_informative=5, weights=[0.85], random_state=100 + seed), 4.0),
}

# Below 500 rows, not used to set the rule: name -> seed -> (X, y); 70/30 splits.
HELDOUT = {
    "wine (124)": lambda seed: load_wine(return_X_y=True),
    "iris (105)": lambda seed: load_iris(return_X_y=True),
    "breast cancer (280)": lambda seed: _subsample(load_breast_cancer(return_X_y=True), 400,
                                                   seed),
    "synthetic K=3 (301)": lambda seed: make_classification(
        430, n_features=8, n_informative=5, n_redundant=1, n_classes=3,
        n_clusters_per_class=1, class_sep=1.2, random_state=4000 + seed),
    "90/10 K=2 (301)": lambda seed: make_classification(
        430, n_features=8, n_informative=4, n_redundant=2, weights=[0.9],
        random_state=3000 + seed),
    "synthetic K=2 (100)": lambda seed: make_classification(
        143, n_features=10, n_informative=5, n_classes=2, random_state=5000 + seed),
}


def _split(X, y, seed, test_size=0.3, scale=True):
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=test_size, random_state=seed, stratify=y)
    if scale:
        scaler = StandardScaler().fit(X_train)
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    return X_train, X_test, y_train, y_test


def _score(model, X_test, y_test):
    predicted = model.predict(X_test)
    return np.mean(predicted == y_test), balanced_accuracy_score(y_test, predicted)


def _fit_pate(factory, X, y, eps, seed, **kw):
    model = factory(epsilon=eps, delta=DELTA, classes=np.unique(y), random_state=seed,
                    n_jobs=N_JOBS, **kw)
    return model.fit(X, y)


class Cell:
    """Medians over seeds of accuracy, balanced accuracy and answered queries."""

    def __init__(self):
        self.acc, self.bal, self.answered, self.counts = [], [], [], ""

    def add(self, model, X_test, y_test):
        acc, bal = _score(model, X_test, y_test)
        self.acc.append(acc)
        self.bal.append(bal)
        if hasattr(model, "n_answered_"):
            self.answered.append(model.n_answered_)
            self.counts = f"{model.n_teachers_}/{model.n_queries_}"

    def text(self, balanced=True, spread=False):
        out = f"{statistics.median(self.acc):.3f}"
        if spread:
            out += f" ({min(self.acc):.3f}-{max(self.acc):.3f})"
        if balanced:
            out += f" / {statistics.median(self.bal):.3f}"
        return out


def _majority(y):
    return np.unique(y, return_counts=True)[1].max() / len(y)


# ---------------------------------------------------------------------------
# Before/after
# ---------------------------------------------------------------------------

DIGITS_CONFIGS = {
    "old": lambda **kw: _old(**kw),
    "old, GNMax": lambda **kw: PATEClassifier(LogisticRegression(), student=None,
                                              aggregator="gnmax", **kw),
    "new, Confident-GNMax": lambda **kw: _new(aggregator="confident_gnmax", **kw),
    "new": lambda **kw: _new(**kw),
}


def digits(seeds, args):
    X, y = load_digits(return_X_y=True)
    rows = []
    for scale in (False, True):
        lr = Cell()
        for seed in seeds:
            X_train, X_test, y_train, y_test = _split(X, y, seed, 0.25, scale)
            lr.add(LogisticRegression(max_iter=1000).fit(X_train, y_train), X_test, y_test)
        for eps in EPSILONS:
            cells = {name: Cell() for name in DIGITS_CONFIGS}
            for seed in seeds:
                X_train, X_test, y_train, y_test = _split(X, y, seed, 0.25, scale)
                for name, factory in DIGITS_CONFIGS.items():
                    model = _fit_pate(factory, X_train, y_train, eps, seed)
                    cells[name].add(model, X_test, y_test)
            rows.append(["standardised" if scale else "raw", f"{eps:g}"] + [
                f"{cell.text(balanced=False, spread=True)} [{cell.counts}, "
                f"{statistics.median(cell.answered):g}]" for cell in cells.values()]
                + [lr.text(balanced=False)])
            print(" | ".join(rows[-1]), flush=True)
    _table(f"digits, 75/25 stratified splits, seeds {seeds[0]}-{seeds[-1]}: median accuracy "
           "(min-max) [teachers/queries, answered]",
           ["features", "eps", *DIGITS_CONFIGS, "non-private LR"], rows)


def heldout(seeds, args):
    rows = []
    for name, load in HELDOUT.items():
        for eps in EPSILONS:
            lr, old, new, majority = Cell(), Cell(), Cell(), []
            for seed in seeds:
                X_train, X_test, y_train, y_test = _split(*load(seed), seed)
                majority.append(_majority(y_test))
                if eps == EPSILONS[0]:
                    lr.add(LogisticRegression().fit(X_train, y_train), X_test, y_test)
                old.add(_fit_pate(_old, X_train, y_train, eps, seed), X_test, y_test)
                new.add(_fit_pate(_new, X_train, y_train, eps, seed), X_test, y_test)
            if eps == EPSILONS[0]:
                lr_text = lr.text()
            rows.append([f"{name}, majority {statistics.median(majority):.3f}", f"{eps:g}",
                         lr_text, old.text(), new.text(), f"{new.counts}"])
            print(" | ".join(rows[-1]), flush=True)
    _table(f"held-out sets, 70/30 stratified, medians of {len(seeds)} seeds: accuracy / "
           "balanced accuracy",
           ["data (training rows)", "eps", "non-private LR", "old", "new",
            "new: teachers/queries"], rows)


def adult(seeds, args):
    data = load_adult(args.data_dir, norm_bound=float(np.finfo(np.float64).max))
    X, y, X_test, y_test = data.X_train, data.y_train, data.X_test, data.y_test
    lr = Cell()
    lr.add(LogisticRegression(max_iter=1000).fit(X, y), X_test, y_test)
    rows = []
    for eps in (0.5, 1.0, 2.0, 4.0, 8.0):
        old, new = Cell(), Cell()
        for seed in seeds:
            old.add(_fit_pate(_old, X, y, eps, seed), X_test, y_test)
            new.add(_fit_pate(_new, X, y, eps, seed), X_test, y_test)
        rows.append([f"{eps:g}", old.text(), old.counts, new.text(), new.counts])
        print(" | ".join(rows[-1]), flush=True)
    _table(f"UCI Adult, medians of {len(seeds)} seeds: accuracy / balanced accuracy "
           f"(majority {_majority(y_test):.3f}; non-private LR {lr.text()})",
           ["eps", "old", "old: T/Q", "new", "new: T/Q"], rows)


# ---------------------------------------------------------------------------
# The rule's sweeps (development sets)
# ---------------------------------------------------------------------------


def _self_training(weights=None):
    return SelfTrainingClassifier(_scaled(_lr(weights)))


def _balanced_teachers(**kw):
    return PATEClassifier(_lr("balanced"), **kw)


def _sweep(title, configs, epsilons, seeds, counts=None):
    """One row per development set and epsilon, one column per configuration."""
    rows = []
    for name, load in DEVELOPMENT.items():
        for eps in epsilons:
            cells = {config: Cell() for config in configs}
            for seed in seeds:
                X_train, X_test, y_train, y_test = _split(*load(seed), seed)
                for config, factory in configs.items():
                    model = _fit_pate(factory, X_train, y_train, eps, seed, **(counts or {}))
                    cells[config].add(model, X_test, y_test)
            rows.append([name, f"{eps:g}"] + [cell.text() for cell in cells.values()])
            print(" | ".join(rows[-1]), flush=True)
    _table(title, ["data (training rows)", "eps", *configs], rows)


def aggregator(seeds, args):
    configs = {
        "auto student, GNMax": lambda **kw: _new(aggregator="gnmax", **kw),
        "auto student, Confident": lambda **kw: _new(aggregator="confident_gnmax", **kw),
        "LR student, GNMax": lambda **kw: _balanced_teachers(student=_lr(),
                                                             aggregator="gnmax", **kw),
        "LR student, Confident": lambda **kw: _balanced_teachers(
            student=_lr(), aggregator="confident_gnmax", **kw),
    }
    _sweep(f"aggregator, \"auto\" counts, medians of {len(seeds)} seeds: accuracy / balanced "
           "accuracy", configs, EPSILONS, seeds)
    _sweep(f"aggregator, 30 teachers and 50 queries (the selection informative), medians of "
           f"{len(seeds)} seeds", configs, (8.0, 16.0), seeds,
           counts={"n_teachers": 30, "n_queries": 50})


def student(seeds, args):
    configs = {
        "LR": lambda **kw: _balanced_teachers(student=_lr(), aggregator="gnmax", **kw),
        "LR balanced": lambda **kw: _balanced_teachers(
            student=_scaled(_lr("balanced")), aggregator="gnmax", **kw),
        "self-training LR": lambda **kw: _balanced_teachers(
            student=_self_training(), aggregator="gnmax", **kw),
        "self-training LR balanced": lambda **kw: _balanced_teachers(
            student=_self_training("balanced"), aggregator="gnmax", **kw),
        "LabelSpreading": lambda **kw: _balanced_teachers(
            student=_scaled(LabelSpreading(kernel="knn", n_neighbors=7)), aggregator="gnmax",
            **kw),
    }
    _sweep(f"student (GNMax, balanced LR teachers, \"auto\" counts), medians of {len(seeds)} "
           "seeds: accuracy / balanced accuracy", configs, (2.0, 4.0, 8.0), seeds)


WEIGHTS = {
    "none": (None, None),
    "teachers": ("balanced", None),
    "teachers and student": ("balanced", "balanced"),
}


def weights(seeds, args):
    sets = dict(IMBALANCED)
    if args.adult:
        adult = load_adult(args.data_dir, norm_bound=float(np.finfo(np.float64).max))
        sets["UCI Adult (32561), 1 seed"] = (
            lambda seed: (adult.X_train, adult.X_test, adult.y_train, adult.y_test), 4.0)
    rows = []
    for name, (load, eps) in sets.items():
        for rows_per_part in (5, 10, 20, 40, 80):
            cells = {key: Cell() for key in WEIGHTS}
            for seed in seeds[:1] if "Adult" in name else seeds:
                data = load(seed)
                X_train, X_test, y_train, y_test = (
                    data if len(data) == 4 else _split(*data, seed))
                for key, (teacher, student) in WEIGHTS.items():
                    model = _fit_pate(
                        PATEClassifier, X_train, y_train, eps, seed, estimator=_lr(teacher),
                        student=_self_training(student), aggregator="gnmax",
                        n_teachers=len(y_train) // rows_per_part)
                    cells[key].add(model, X_test, y_test)
            rows.append([name, f"{eps:g}", str(rows_per_part),
                         next(iter(cells.values())).counts]
                        + [cell.text() for cell in cells.values()])
            print(" | ".join(rows[-1]), flush=True)
    _table(f"class weights (GNMax, self-training LR student), medians of {len(seeds)} seeds: "
           "accuracy / balanced accuracy",
           ["data (training rows)", "eps", "rows a part", "T/Q",
            *(f"balanced: {key}" for key in WEIGHTS)], rows)


def floor(seeds, args):
    sets = {name: load for name, load in DEVELOPMENT.items() if not name.startswith("digits")}
    sets["90/10 K=2 (301)"] = lambda seed: make_classification(
        430, n_features=10, n_informative=5, weights=[0.9], random_state=100 + seed)
    floors = (5, 10, 20)
    rows = []
    default = _pate._MIN_ROWS
    try:
        for name, load in sets.items():
            for eps in EPSILONS:
                cells = {rows_floor: Cell() for rows_floor in floors}
                for seed in seeds:
                    X_train, X_test, y_train, y_test = _split(*load(seed), seed)
                    for rows_floor in floors:
                        _pate._MIN_ROWS = rows_floor  # the rule's max(5, 2 K) -> max(m, 2 K)
                        model = _fit_pate(_new, X_train, y_train, eps, seed)
                        cells[rows_floor].add(model, X_test, y_test)
                rows.append([name, f"{eps:g}"] + [f"{cell.text()} [{cell.counts}]"
                                                  for cell in cells.values()])
                print(" | ".join(rows[-1]), flush=True)
    finally:
        _pate._MIN_ROWS = default
    _table(f"rows per part at least max(m, 2 K), new defaults otherwise, medians of "
           f"{len(seeds)} seeds: accuracy / balanced accuracy [teachers/queries]",
           ["data (training rows)", "eps", *(f"m = {m}" for m in floors)], rows)


def _one_class_votes(votes):
    """``_teacher_votes`` as it was before one-class teachers abstained: they vote their class."""

    def voting(teacher, X_train, targets, fit_params, X_queries, n_classes):
        labeled = targets[targets >= 0]
        out = votes(teacher, X_train, targets, fit_params, X_queries, n_classes)
        if np.unique(labeled).size == 1:
            return np.full_like(out, labeled[0])
        return out

    return voting


ABSTAIN_SETS = {
    "85/15 K=2 (301)": DEVELOPMENT["85/15 K=2 (301)"],
    "90/10 K=2 (301), development": lambda seed: make_classification(
        430, n_features=10, n_informative=5, weights=[0.9], random_state=100 + seed),
    "90/10 K=2 (301), held out": HELDOUT["90/10 K=2 (301)"],
    "85/15 K=2 (2000)": IMBALANCED["85/15 K=2 (2000)"][0],
    "synthetic K=2 (301)": DEVELOPMENT["synthetic K=2 (301)"],
    "wine (124)": HELDOUT["wine (124)"],
    "breast cancer (280)": HELDOUT["breast cancer (280)"],
}


def abstain(seeds, args):
    """One-class teachers voting their class (before) against abstaining (now)."""
    rows = []
    voting = _one_class_votes(_pate._teacher_votes)
    for name, load in ABSTAIN_SETS.items():
        for eps in EPSILONS:
            cells, majority = {"vote": Cell(), "abstain": Cell()}, []
            for seed in seeds:
                X_train, X_test, y_train, y_test = _split(*load(seed), seed)
                majority.append(_majority(y_test))
                for key, cell in cells.items():
                    saved = _pate._teacher_votes
                    if key == "vote":
                        _pate._teacher_votes = voting
                    try:
                        cell.add(_fit_pate(_new, X_train, y_train, eps, seed), X_test, y_test)
                    finally:
                        _pate._teacher_votes = saved
            rows.append([f"{name}, majority {statistics.median(majority):.3f}", f"{eps:g}",
                         cells["vote"].text(), cells["abstain"].text(), cells["vote"].counts])
            print(" | ".join(rows[-1]), flush=True)
    _table(f"one-class teachers, PATEClassifier() otherwise, medians of {len(seeds)} "
           "stratified 70/30 splits: accuracy / balanced accuracy",
           ["data (training rows)", "eps", "they vote their class (before)", "they abstain",
            "teachers/queries"], rows)


TABLES = {
    "digits": (digits, 5),
    "aggregator": (aggregator, 5),
    "student": (student, 5),
    "weights": (weights, 5),
    "floor": (floor, 5),
    "heldout": (heldout, 9),
    "adult": (adult, 3),
    "abstain": (abstain, 9),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("table", choices=list(TABLES))
    parser.add_argument("--seeds", type=int, default=None,
                        help="splits (default: 5, 9 for heldout, 3 for adult)")
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR),
                        help="where adult.{data,test}.csv are (adult, weights --adult)")
    parser.add_argument("--adult", action="store_true", help="weights: add UCI Adult")
    args = parser.parse_args(argv)
    table, default_seeds = TABLES[args.table]
    start = time.perf_counter()
    with threadpool_limits(limits=1), warnings.catch_warnings():
        # PATE's noise warnings, the students' convergence and LabelSpreading's
        # division by zero for rows no label reaches: the tables say what happened.
        warnings.simplefilter("ignore")
        table(list(range(args.seeds or default_seeds)), args)
    print(f"\n[{args.table}: {time.perf_counter() - start:.0f} s]")


if __name__ == "__main__":
    main()
