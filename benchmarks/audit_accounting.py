"""Distinguishing audit of DP-SGD's and PATE's recorded label-DP epsilon (independent fits).

For each mechanism, two neighbouring training sets differ in one label, the
canary's: side ``a`` gives it label 1, side ``b`` label 0. Each side is fitted
``--fits`` times with independent seeds; a score of each fitted model is
computed from what the fit released:

* DP-SGD (:class:`~sklearn_labeldp.nn.DPSGDClassifier`, Poisson sampling at
  ``q = 1/2``, 10 steps, a linear network initialised at zero, on 20
  points in 3-d): the canary alone on the first axis, the others in the plane
  orthogonal to it, so that the weights on its feature move only with its
  clipped gradient and the noise; the score is the log-odds of class 1 at the
  canary minus that at the origin (free of the bias);
* PATE (:class:`~sklearn_labeldp.classifiers.PATEClassifier` with GNMax): 5
  teachers, each holding one row (a part with one label votes that label), 2
  labelled 1 and 2 labelled 0 beside the canary, so that the canary decides
  the majority and its change moves two vote counts by one, the worst case;
  the score is the number of the 5 answered queries labelled 1
  (``answered_labels_``, a DP output).

The event "score above t" (or below) is chosen on ``--tune`` separate fits per
side (the threshold and direction that give the largest lower bound there),
then applied to the ``--fits`` audit fits: :func:`~sklearn_labeldp.audit.event_privacy_audit`
turns the two frequencies into Clopper-Pearson bounds (95% jointly) and a
lower bound on epsilon at the recorded delta (Ding et al. 2018; Jagielski,
Ullman and Oprea 2020). The audit passes when the bound stays below the
recorded ``epsilon_``; a bound close to it says the accounting is nearly tight
for this attack.

Run ``nice python benchmarks/audit_accounting.py`` (2000 fits per side after
200 tuning fits; a fit takes 0.17 s (DP-SGD) and 0.2-0.3 s (PATE) on an idle
core, 0.36 s and 0.58 s measured on a shared, loaded 2-core machine: about 30
and 45 minutes), ``--save PREFIX`` to keep the scores and resume an
interrupted run, ``--mechanism dp-sgd`` / ``pate``, ``--fits 200 --tune 100``
for a smoke run. Measured (label epsilon 4, delta 1e-5, 2000 fits per side):
DP-SGD's lower bound 0.89 (150 tuning fits per side), PATE's 0.92.
"""

import argparse
import json
import math
import os
import sys
import time
import warnings

import numpy as np

from sklearn_labeldp.audit import event_privacy_audit

DELTA = 1e-5


def _dp_sgd_data():
    """20 rows in 3-d: the canary alone on the first axis, the others in the plane below.

    A linear network's weights on the first feature then move only with the
    canary's clipped gradient (and the noise), so the score below reads its
    label through the noisy sum of its gradients.
    """
    rng = np.random.default_rng(0)
    X = np.zeros((20, 3), dtype=np.float32)
    X[1:, 1:] = rng.normal(size=(19, 2))
    y = (X[:, 1] > 0).astype(int)
    X[0, 0] = 10.0  # the canary; its gradient stays clipped to C while |p - y| > 0.07
    return X, y


def _zero_linear():
    """A linear network on 3 features whose weights start at zero.

    Starting at zero, the final weights are the noisy sum of the clipped
    gradients alone: a random initialisation would add its own spread to the
    score and hide part of the canary's effect.
    """
    import torch

    class _ZeroLinear(torch.nn.Module):
        def __init__(self, n_outputs=2):
            super().__init__()
            self.linear = torch.nn.Linear(3, n_outputs)
            torch.nn.init.zeros_(self.linear.weight)
            torch.nn.init.zeros_(self.linear.bias)

        def forward(self, X):
            return self.linear(X)

    return _ZeroLinear


def dp_sgd_scores(canary_label, seeds, epsilon):
    """Log-odds of class 1 at the canary minus at the origin, one fit per seed.

    For the linear network this is 10 times the difference of the two
    classes' weights on the canary's feature, free of the bias.
    """
    import torch

    from sklearn_labeldp.nn import DPSGDClassifier, LabelDPNetClassifier

    torch.set_num_threads(1)
    X, y = _dp_sgd_data()
    y = y.copy()
    y[0] = canary_label
    probe = np.zeros((2, 3), dtype=np.float32)
    probe[0] = X[0]
    # q = 10 / 20 Poisson sampling, 5 epochs of 2 steps: T = 10 noisy steps. A small
    # learning rate keeps every predicted probability near 1/2, so the canary's
    # gradient stays clipped at norm C at every step (a saturated model would stop
    # moving with its label, and the test would lose power).
    net = LabelDPNetClassifier(_zero_linear(), max_epochs=5, batch_size=10, lr=0.01)
    scores, model = [], None
    for seed in seeds:
        model = DPSGDClassifier(net, epsilon=epsilon, delta=DELTA, classes=[0, 1],
                                random_state=np.random.default_rng(seed)).fit(X, y)
        logp = np.log(np.clip(model.predict_proba(probe), 1e-300, None))
        odds = logp[:, 1] - logp[:, 0]
        scores.append(odds[0] - odds[1])
    return np.asarray(scores), (model.epsilon_, model.delta_)


def pate_scores(canary_label, seeds, epsilon):
    """Number of queries answered 1, one fit per seed; and the recorded spend."""
    from sklearn.linear_model import LogisticRegression

    from sklearn_labeldp.classifiers import PATEClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 2))
    y = np.array([canary_label, 1, 1, 0, 0])
    scores, model = [], None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a student replaced by a constant one, when all agree
        for seed in seeds:
            model = PATEClassifier(LogisticRegression(), n_teachers=5, n_queries=5,
                                   aggregator="gnmax", epsilon=epsilon, delta=DELTA,
                                   classes=[0, 1],
                                   random_state=np.random.default_rng(seed)).fit(X, y)
            scores.append(np.count_nonzero(model.answered_labels_ == 1))
    return np.asarray(scores, dtype=float), (model.epsilon_, model.delta_)


MECHANISMS = {"dp-sgd": dp_sgd_scores, "pate": pate_scores}


def _bound(scores_a, scores_b, threshold, upper, delta):
    if upper:
        return event_privacy_audit(scores_a > threshold, scores_b > threshold)
    # "Score below t": side b (canary 0) is then the more likely one.
    return event_privacy_audit(scores_b < threshold, scores_a < threshold)


def choose_event(scores_a, scores_b, delta):
    """The threshold and direction with the largest lower bound on these (tuning) fits."""
    values = np.unique(np.concatenate([scores_a, scores_b]))
    candidates = np.unique(np.quantile(values, np.linspace(0.0, 1.0, 101)))
    cuts = np.concatenate([candidates, (candidates[1:] + candidates[:-1]) / 2])
    best = (0.0, float(np.median(values)), True)
    for t in cuts:
        for upper in (True, False):
            eps = _bound(scores_a, scores_b, t, upper, delta).epsilon_lower(delta)
            if eps > best[0]:
                best = (eps, float(t), upper)
    return best


_CHUNK = 50


def _collect(state, key, scores, canary, seeds, epsilon, path):
    """Extend ``state[key]`` to one score per seed, saving ``state`` after every chunk."""
    done = state.get(key, np.empty(0))
    while done.size < len(seeds):
        chunk = seeds[done.size:done.size + _CHUNK]
        new, recorded = scores(canary, chunk, epsilon)
        done = np.concatenate([done, new])
        state[key] = done
        state["recorded"] = np.array(recorded[:2])
        if path:
            np.savez(path, **state)
    return done


def run(name, n_fits, n_tune, epsilon, seed, path=None):
    """Tune the event, then audit; with ``path``, resume from and save to that .npz file."""
    scores = MECHANISMS[name]
    children = np.random.SeedSequence(seed).spawn(4)
    # Independent 128-bit streams, one per fit (the same ones when resumed).
    seeds = [c.spawn(n_tune if i < 2 else n_fits) for i, c in enumerate(children)]
    state = {}
    if path and os.path.exists(path):
        with np.load(path) as saved:
            state = {k: saved[k] for k in saved.files}
    keys = ("tune_a", "tune_b", "audit_a", "audit_b")
    before = sum(state[k].size for k in keys if k in state)
    start = time.perf_counter()
    tune_a = _collect(state, "tune_a", scores, 1, seeds[0], epsilon, path)
    tune_b = _collect(state, "tune_b", scores, 0, seeds[1], epsilon, path)
    tune_eps, threshold, upper = choose_event(tune_a, tune_b, DELTA)
    # Both sides advance together, so an interrupted run has as many fits on each.
    audit_a, audit_b = state.get("audit_a", np.empty(0)), state.get("audit_b", np.empty(0))
    while min(audit_a.size, audit_b.size) < n_fits:
        upto = min(n_fits, min(audit_a.size, audit_b.size) + _CHUNK)
        audit_a = _collect(state, "audit_a", scores, 1, seeds[2][:upto], epsilon, path)
        audit_b = _collect(state, "audit_b", scores, 0, seeds[3][:upto], epsilon, path)
        print(f"  {name}: {upto} audit fits per side", file=sys.stderr, flush=True)
    audit_a, audit_b = audit_a[:n_fits], audit_b[:n_fits]
    elapsed = time.perf_counter() - start
    fitted = sum(state[k].size for k in keys) - before  # in this invocation
    result = _bound(audit_a, audit_b, threshold, upper, DELTA)
    eps_recorded, delta_recorded = (float(v) for v in state["recorded"])
    out = {
        "mechanism": name, "target_epsilon": epsilon, "fits_per_side": n_fits,
        "tuning_fits_per_side": n_tune, "threshold": threshold,
        "event": ">" if upper else "<", "tuning_epsilon_lower": tune_eps,
        "p_a": result.p_a, "p_b": result.p_b, "p_a_lower": result.p_a_lower,
        "p_b_upper": result.p_b_upper, "epsilon_lower": result.epsilon_lower(delta_recorded),
        "epsilon_recorded": eps_recorded, "delta_recorded": delta_recorded,
        "seconds": elapsed, "seconds_per_fit": elapsed / max(fitted, 1),
    }
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mechanism", choices=[*MECHANISMS, "all"], default="all")
    parser.add_argument("--fits", type=int, default=2000, help="audit fits per side")
    parser.add_argument("--tune", type=int, default=200, help="tuning fits per side")
    parser.add_argument("--epsilon", type=float, nargs="+", default=[4.0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="append each result as a JSON line to this file")
    parser.add_argument("--save", help="keep the scores in SAVE-<mechanism>-<eps>.npz, "
                        "and resume from them")
    args = parser.parse_args(argv)
    names = list(MECHANISMS) if args.mechanism == "all" else [args.mechanism]
    header = (f"{'mechanism':8s} {'eps':>5s} {'fits/side':>9s} {'event':>12s} {'p_a':>6s} "
              f"{'p_b':>6s} {'eps_lower':>9s} {'recorded':>8s} {'ratio':>6s} {'s/fit':>6s}")
    print(f"distinguishing audit, 95% Clopper-Pearson, delta = {DELTA:g}")
    print(header)
    print("-" * len(header))
    failures = []
    for name in names:
        for epsilon in args.epsilon:
            path = args.save and f"{args.save}-{name}-{epsilon:g}.npz"
            res = run(name, args.fits, args.tune, epsilon, args.seed, path)
            event = f"{res['event']} {res['threshold']:.4g}"
            print(f"{name:8s} {epsilon:5.1f} {args.fits:9d} {event:>12s} {res['p_a']:6.3f} "
                  f"{res['p_b']:6.3f} {res['epsilon_lower']:9.3f} "
                  f"{res['epsilon_recorded']:8.3f} "
                  f"{res['epsilon_lower'] / res['epsilon_recorded']:6.2f} "
                  f"{res['seconds_per_fit']:6.3f}", flush=True)
            if args.json:
                with open(args.json, "a") as fh:
                    fh.write(json.dumps(res) + "\n")
            if not res["epsilon_lower"] <= res["epsilon_recorded"] or math.isnan(
                    res["epsilon_lower"]):
                failures.append(f"{name} at eps={epsilon}: lower bound above the record")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("every lower bound stays below the recorded epsilon")
    return 0


if __name__ == "__main__":
    sys.exit(main())
