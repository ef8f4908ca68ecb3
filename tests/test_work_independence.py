"""The work of a fit depends on the private labels only through its DP outputs.

DESIGN.md, "Work independent of labels": inside a mechanism (everything that
runs inside :meth:`PrivateLabels.release`, where true labels are read before
the noise) the same inner estimators are fitted on the same rows, the same
calls are made, the same lines are printed, and a failure becomes a fixed
output rather than an abort; after the release, work may depend on the labels
only through the released output. An attacker who sees the work (its timing,
its progress bars) learns nothing else.

Found by construction, not by timing. Every base estimator is instrumented
(``tests/_instrument.py``): each ``fit``, ``fit_semi``, ``predict``,
``predict_proba`` and ``decision_function`` appends a line (the call, the shape
and a digest of the public ``X``, and how many targets are the public ``-1``)
to a trace file, from joblib's worker processes too. Each fit runs in two
worlds on worst-case neighbouring labels (all equal, and all equal but one; in
PATE that makes every teacher's part one class in one world, while in the other
one part holds a single positive):

- world A runs normally and *records* the output of every release, in order;
- world B runs every release too, so the work inside its mechanism is traced,
  but each release returns world A's recorded output (*replay*) instead of its
  own.

Everything after a release then sees the same DP output in both worlds, and
the same integer ``random_state`` gives both the same label-independent plans
(parts, queries, stages, rounds). So the two worlds' traces (in order with one
job, as multisets with two), their printed output (timings masked), warnings,
log records and outcomes (fitted, or the exception's type) must be identical:
any difference is work that depends on a label other than through a DP output.
"""

import difflib
import functools
import importlib.util
import inspect
import math
import warnings

import numpy as np
import pytest
from _attack import estimator_types
from _instrument import (
    ReleaseTape,
    TracedClassifier,
    TracedRegressor,
    observe,
    read_trace,
    shown,
    traced_mlp,
    write_line,
)
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import LabelSpreading

from sklearn_labeldp._private_labels import PrivateLabels
from sklearn_labeldp.accounting import BudgetAccountant
from sklearn_labeldp.classifiers import (
    ALIBIClassifier,
    PATEClassifier,
    RRWithPriorClassifier,
    VectorApproxClassifier,
)
from sklearn_labeldp.model_selection import PrivateGridSearchCV
from sklearn_labeldp.regression import NoisyLabelRegressor
from sklearn_labeldp.utils import all_estimators

CLASSES = [0, 1]
SEED = 20_250_301  # one user seed for both worlds: the same label-independent plans
N_SAMPLES = 120
CHANGED_ROW = 0  # the one label that differs between the neighbours
HAS_TORCH = all(importlib.util.find_spec(name) is not None
                for name in ("torch", "skorch", "opacus"))


@functools.cache
def _features():
    X, _ = make_classification(n_samples=N_SAMPLES, n_features=4, n_informative=2,
                               n_redundant=0, random_state=0)
    return StandardScaler().fit_transform(X)


def _neighbours(dtype=np.int64):
    """Worst-case neighbours: every label 0, and every label 0 but one."""
    y0 = np.zeros(N_SAMPLES, dtype=dtype)
    y1 = y0.copy()
    y1[CHANGED_ROW] = 1
    return y0, y1


def _accountant():
    return BudgetAccountant(math.inf, 1.0)


# ---------------------------------------------------------------------------- the cases


def _pate(log, teacher, student, n_jobs):
    return PATEClassifier(
        teacher(log, "teacher"), student=student(log, "student"), n_teachers=5, n_queries=30,
        epsilon=4.0, classes=CLASSES, random_state=SEED, accountant=_accountant(),
        n_jobs=n_jobs, verbose=1,
    )


def _logreg(log, tag):
    return TracedClassifier(LogisticRegression(), log=log, tag=tag)


def _spreading(log, tag):
    return TracedClassifier(LabelSpreading(kernel="knn", n_neighbors=5), log=log, tag=tag)


def _knn(log, tag="base", n_neighbors=5):
    return TracedClassifier(KNeighborsClassifier(n_neighbors), log=log, tag=tag)


def _search(log, strategy, **kwargs):
    candidate = RRWithPriorClassifier(_knn(log, "candidate"), epsilon=1.0, classes=CLASSES,
                                      verbose=1)
    return PrivateGridSearchCV(
        candidate, {"estimator__estimator__n_neighbors": [3, 7]}, epsilon=3.0,
        strategy=strategy, random_state=SEED, accountant=_accountant(), verbose=1, **kwargs,
    )


def _dpsgd(log):
    from sklearn_labeldp.nn import DPSGDClassifier, LabelDPNetClassifier

    net = LabelDPNetClassifier(traced_mlp(), module__log=log, module__n_features=4,
                               max_epochs=2, batch_size=40, lr=0.1, device="cpu")
    return DPSGDClassifier(net, epsilon=2.0, classes=CLASSES, random_state=SEED,
                           accountant=_accountant(), verbose=1)


# name -> (factory(log) -> estimator, labels dtype, whether the trace is in order (one job))
CASES = {
    "pate_logreg_1job": (lambda log: _pate(log, _logreg, _logreg, 1), np.int64, True),
    "pate_logreg_2jobs": (lambda log: _pate(log, _logreg, _logreg, 2), np.int64, False),
    "pate_spreading_1job": (lambda log: _pate(log, _spreading, _spreading, 1), np.int64, True),
    "pate_spreading_2jobs": (lambda log: _pate(log, _spreading, _spreading, 2), np.int64,
                             False),
    "rr_2stages": (
        lambda log: RRWithPriorClassifier(
            _logreg(log, "stage"), n_stages=2, epsilon=2.0, classes=CLASSES,
            random_state=SEED, accountant=_accountant(), verbose=1),
        np.int64, True,
    ),
    "alibi_regressor_2rounds": (
        lambda log: ALIBIClassifier(
            TracedRegressor(KNeighborsRegressor(5), log=log, tag="round"), n_rounds=2,
            epsilon=2.0, classes=CLASSES, random_state=SEED, accountant=_accountant(),
            verbose=1),
        np.int64, True,
    ),
    "alibi_classifier_2rounds": (
        lambda log: ALIBIClassifier(
            _logreg(log, "round"), n_rounds=2, epsilon=2.0, classes=CLASSES,
            random_state=SEED, accountant=_accountant(), verbose=1),
        np.int64, True,
    ),
    "vector_approx": (
        lambda log: VectorApproxClassifier(_logreg(log, "bits"), epsilon=2.0, classes=CLASSES,
                                           random_state=SEED, accountant=_accountant()),
        np.int64, True,
    ),
    "noisy_label_regressor": (
        lambda log: NoisyLabelRegressor(
            TracedRegressor(KNeighborsRegressor(5), log=log, tag="regressor"), epsilon=2.0,
            label_range=(0.0, 1.0), random_state=SEED, accountant=_accountant()),
        np.float64, True,
    ),
    "search_holdout": (lambda log: _search(log, "holdout"), np.int64, True),
    "search_random_stopping": (
        lambda log: _search(log, "random_stopping", publish_rounds=False), np.int64, True,
    ),
    "search_post_processing": (
        lambda log: _search(log, "post_processing", cv=3), np.int64, True,
    ),
    "dpsgd": (_dpsgd, np.int64, True),
}
_NEEDS_TORCH = {"dpsgd"}


def _case_params():
    return [
        pytest.param(name, marks=pytest.mark.skipif(
            name in _NEEDS_TORCH and not HAS_TORCH, reason="needs torch, skorch and opacus"))
        for name in CASES
    ]


def _diff(a, b):
    lines = difflib.unified_diff(a, b, "world A (all labels equal)",
                                 "world B (one label changed)", lineterm="", n=2)
    return "\n".join(list(lines)[:60])


def _compare(a, b, ordered=True):
    """Every difference between two worlds, as readable text (empty: none)."""
    problems = []
    if a.outcome != b.outcome:
        problems.append(f"outcome: {a.outcome} -> {b.outcome}")
    trace_a, trace_b = (a.trace, b.trace) if ordered else (sorted(a.trace), sorted(b.trace))
    if trace_a != trace_b:
        problems.append("calls:\n" + _diff(trace_a, trace_b))
    for channel in ("stdout", "stderr", "warnings", "logs"):
        if getattr(a, channel) != getattr(b, channel):
            problems.append(f"{channel}:\n" + _diff(getattr(a, channel), getattr(b, channel)))
    return problems


@pytest.fixture
def trace_log(tmp_path):
    return str(tmp_path / "trace.log")


@pytest.mark.parametrize("case", _case_params())
def test_work_depends_on_labels_only_through_the_dp_output(case, trace_log, monkeypatch,
                                                           capfd):
    factory, dtype, ordered = CASES[case]
    X = _features().astype(np.float32) if case in _NEEDS_TORCH else _features()
    y0, y1 = _neighbours(dtype)
    tape = ReleaseTape(trace_log).install(monkeypatch)
    tape.start("record")
    a = observe(factory(trace_log), X, y0, capfd, trace_log)
    tape.start("replay")
    b = observe(factory(trace_log), X, y1, capfd, trace_log)

    # Not vacuous: the recorded world fitted, released, and its base was called.
    assert a.outcome == "fitted", f"{case}: the recorded world did not fit ({a.outcome})"
    assert any(line.startswith("release") for line in a.trace), a.trace
    assert any(not line.startswith("release") for line in a.trace), a.trace
    problems = _compare(a, b, ordered)
    assert not problems, (
        f"{case}: the work differs between neighbouring labels although every release "
        "returned the same output:\n" + "\n".join(problems)
    )


def test_every_estimator_with_a_base_estimator_has_a_case(trace_log):
    with_base = {
        name for name, cls in all_estimators()
        if "estimator" in inspect.signature(cls).parameters  # the keys of get_params()
    }
    assert {"PATEClassifier", "PrivateGridSearchCV", "NoisyLabelRegressor"} <= with_base
    covered = set()
    for name, (factory, _, _) in CASES.items():
        if name in _NEEDS_TORCH and not HAS_TORCH:
            continue
        covered |= estimator_types(factory(trace_log))
    if not HAS_TORCH:  # listed by all_estimators() only when torch and skorch are there
        with_base -= {"DPSGDClassifier"}
    missing = with_base - covered
    assert not missing, f"add a case to CASES for {sorted(missing)}"


# --------------------------------------------------------------- controls of the method


def _one_class_shortcut(codes, *, X, log):
    """A mechanism that skips its fit when the labels are one class (PATE's old teacher)."""
    if np.unique(codes).size > 1:
        TracedClassifier(LogisticRegression(), log=log).fit(X, codes)
    return np.zeros(codes.size, dtype=np.intp)


def _noisy_copy(codes, *, rng):
    flip = rng.random(codes.size) < 0.3
    return np.where(flip, 1 - codes, codes)


def test_the_method_sees_work_inside_a_release_and_replays_its_output(trace_log,
                                                                      monkeypatch):
    # Control: a label-dependent branch inside a release shows in the traces, and the
    # replay makes the work after a release identical where the releases' own outputs
    # differ (here through different coins).
    tape = ReleaseTape(trace_log).install(monkeypatch)
    X = _features()
    traces, outputs = [], []
    for world, (mode, y) in enumerate(zip(("record", "replay"), _neighbours(), strict=True)):
        tape.start(mode)
        labels = PrivateLabels(y, 2, 2.0)
        labels.release(_one_class_shortcut, np.arange(60), privacy_cost=1.0, X=X[:60],
                       log=trace_log)
        noisy = labels.release(_noisy_copy, np.arange(60, 120), privacy_cost=1.0,
                               rng=np.random.default_rng(world))
        outputs.append(noisy)
        TracedClassifier(LogisticRegression(), log=trace_log).fit(X[60:], noisy)
        traces.append(read_trace(trace_log))
    own = _noisy_copy(_neighbours()[1][60:], rng=np.random.default_rng(1))
    assert not np.array_equal(own, outputs[0])  # world B's own output differed...
    np.testing.assert_array_equal(outputs[0], outputs[1])  # ...and A's was replayed
    assert [trace[0] for trace in traces] == ["release 0 _one_class_shortcut n=60 start"] * 2
    inside = [trace[1: trace.index("release 0 end")] for trace in traces]
    assert inside[0] == [], inside  # all labels 0: the fit was skipped...
    assert len(inside[1]) == 1 and inside[1][0].startswith("base fit X=(60, 4)"), inside
    # ...and the fit after the second release saw the same rows and targets in both.
    assert traces[0][-1] == traces[1][-1] and traces[0][-1].startswith("base fit X=(60, 4)")


def test_shown_masks_timing_only():
    bar = "teachers:  40%|####      | 2/5 [00:01<00:02, 1.2it/s]\rteachers: 100%|##########| 5/5 "
    assert shown(bar + "[00:03<00:00, 1.53it/s]\n") == [
        "teachers: 100%|##########| 5/5 <t>", ""]
    assert shown("a 3/5 [00:00<?, ?it/s]\n") != shown("a 4/5 [00:00<?, ?it/s]\n")


# ------------------------------------------------- random stopping keeps its rounds secret


def _rounds_search(seed, publish):
    rr = RRWithPriorClassifier(KNeighborsClassifier(), epsilon=1.0, classes=CLASSES, verbose=1)
    alibi = ALIBIClassifier(KNeighborsRegressor(), epsilon=1.0, classes=CLASSES, n_rounds=2,
                            verbose=1)
    return PrivateGridSearchCV(
        Pipeline([("clf", rr)]), {"clf": [rr, alibi]}, epsilon=3.0,
        strategy="random_stopping", publish_rounds=publish, random_state=seed,
        accountant=_accountant(), verbose=1,
    )


def test_random_stopping_prints_the_same_whatever_the_number_of_rounds(capfd):
    # The number of rounds T is what random stopping's theorem keeps secret
    # (DESIGN.md: never printed or logged). Candidates built with verbose=1 must not
    # draw one progress bar per round.
    X = _features()
    y = (X[:, 0] > 0).astype(np.int64)
    seeds = (0, 1, 2, 3, 4)
    rounds, printed = {}, {}
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # Control (T published): how many rounds this seed draws.
            rounds[seed] = _rounds_search(seed, True).fit(X, y).rounds_["candidate"].size
            capfd.readouterr()
            _rounds_search(seed, False).fit(X, y)
        out, err = capfd.readouterr()
        printed[seed] = (shown(out), shown(err))
    assert len(set(rounds.values())) >= 2, f"the seeds must draw different T: {rounds}"
    first = seeds[0]
    differ = {seed: rounds[seed] for seed in seeds if printed[seed] != printed[first]}
    assert not differ, (
        f"the output printed depends on the number of rounds (T per seed: {rounds}); "
        f"seed {first} printed {printed[first][1]!r}, others: "
        + "; ".join(f"seed {s} (T={t}) {printed[s][1]!r}" for s, t in differ.items())
    )


# ------------------------------------------------------ a failing teacher is a fixed output


def test_pate_teacher_failing_on_its_part_ends_in_a_fitted_model(trace_log, capfd):
    # CalibratedClassifierCV(cv=3) cannot fit a part holding one positive (3 folds of
    # one member). All labels 0 but one: that teacher fails; all labels 0: none does.
    # A failure inside the mechanism must become a fixed output (an abstention), not
    # an abort after the charge: both neighbours end with a fitted model.
    X = _features()
    worlds = []
    for y in _neighbours():
        teacher = CalibratedClassifierCV(LogisticRegression(), cv=3)
        pate = PATEClassifier(teacher, n_teachers=5, n_queries=30, epsilon=4.0,
                              classes=CLASSES, random_state=SEED, accountant=_accountant(),
                              verbose=1)
        worlds.append(observe(pate, X, y, capfd, trace_log))
    assert [world.outcome for world in worlds] == ["fitted", "fitted"], (
        "all labels 0 -> " + worlds[0].outcome + "; one label 1 -> " + worlds[1].outcome
    )
    assert worlds[0].stderr == worlds[1].stderr and worlds[0].stdout == worlds[1].stdout


def test_traced_bases_log_across_processes(trace_log):
    # The instrument itself: a traced clone fitted in a loky worker writes to the log.
    from joblib import Parallel, delayed

    X, y = _features(), np.arange(N_SAMPLES) % 2
    traced = _logreg(trace_log, "worker")
    Parallel(n_jobs=2)(delayed(lambda e, X, y: e.fit(X, y).predict(X))(traced, X, y)
                       for _ in range(2))
    write_line(trace_log, "parent")
    trace = read_trace(trace_log)
    assert sorted(line.split()[1] for line in trace if line.startswith("worker")) == [
        "fit", "fit", "predict", "predict"]
    assert all(line.endswith("unlabeled=0") for line in trace if " fit " in line)
    assert trace[-1] == "parent"
