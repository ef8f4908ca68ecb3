"""Progress bars and log records of the multi-round meta-estimators (LP-MST, ALIBI).

What a caller sees of a ``verbose`` fit must not depend on the labels: the
transcripts (stdout, stderr with the timings removed, warnings, log records)
of two fits whose labels differ in one example, with the same seed, are
identical.
"""

import logging
import re
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_labeldp import ALIBIClassifier, BudgetAccountant, RRWithPriorClassifier
from sklearn_labeldp.datasets import make_circle_gaussians
from sklearn_labeldp.priors import ClusterPrior

pytest.importorskip("tqdm")

K = 3
# tqdm's elapsed and remaining times and its rate: the only parts that vary by run.
_TIMING = re.compile(r"\[[^\]]*\]")


def _frames(err):
    """The distinct successive frames of the bars, timings removed.

    tqdm redraws a frame when its refresh interval has passed, so how often
    one state is drawn depends on the machine's speed; the states do not.
    """
    frames = [frame for frame in re.split(r"[\r\n]", _TIMING.sub("[]", err)) if frame]
    return tuple(frame for i, frame in enumerate(frames) if i == 0 or frame != frames[i - 1])


def _neighbours():
    X, y = make_circle_gaussians(300, K, sigma=0.3, random_state=0)
    changed = y.copy()
    changed[7] = (y[7] + 1) % K
    return X, y, changed


def _transcript(capfd, caplog, clf, X, y):
    capfd.readouterr()
    caplog.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X, y)
    out, err = capfd.readouterr()
    return (
        tuple((w.category.__name__, str(w.message)) for w in caught),
        out,
        _frames(err),
        tuple((r.name, r.levelname, r.getMessage()) for r in caplog.records),
    )


def _lp_mst(verbose):
    return RRWithPriorClassifier(
        LogisticRegression(), epsilon=2.0, classes=range(K), n_stages=2,
        prior=ClusterPrior(n_clusters=4, epsilon=0.5), verbose=verbose, random_state=0,
        accountant=BudgetAccountant(),
    )


def _alibi(verbose):
    return ALIBIClassifier(epsilon=2.0, classes=range(K), n_rounds=3, verbose=verbose,
                           random_state=0, accountant=BudgetAccountant())


@pytest.mark.parametrize(
    ("make", "bar", "logged"),
    [(_lp_mst, "RRWithPriorClassifier stages", ("k-means", "stage 1 of 2", "stage 2 of 2")),
     (_alibi, "ALIBIClassifier rounds", ())],
    ids=["lp_mst", "alibi"],
)
def test_verbose_shows_counts_only_and_the_same_for_neighbouring_labels(
        make, bar, logged, capfd, caplog):
    caplog.set_level(logging.INFO, logger="sklearn_labeldp")
    X, y0, y1 = _neighbours()
    first = _transcript(capfd, caplog, make(1), X, y0)
    assert first == _transcript(capfd, caplog, make(1), X, y1)
    warned, out, err, records = first
    assert out == "" and warned == ()
    n_steps = 2 if make is _lp_mst else 3
    assert any(bar in frame for frame in err) and f"{n_steps}/{n_steps}" in err[-1]
    messages = " | ".join(message for _, _, message in records)
    assert all(part in messages for part in logged)
    assert "charged epsilon=2" in messages
    # Only public sizes in the records: the stages' sizes sum to n.
    sizes = [int(s) for s in re.findall(r"stage \d of \d, (\d+) examples", messages)]
    assert sum(sizes) == (X.shape[0] if make is _lp_mst else 0)


@pytest.mark.parametrize("make", [_lp_mst, _alibi], ids=["lp_mst", "alibi"])
def test_quiet_by_default(make, capfd):
    X, y, _ = _neighbours()
    capfd.readouterr()
    make(0).fit(X, y)
    assert capfd.readouterr() == ("", "")


def test_the_transcript_would_see_a_labelled_message(capfd, caplog):
    # The test's control: a log record that carries a label count differs
    # between the two neighbouring worlds.
    caplog.set_level(logging.INFO, logger="sklearn_labeldp")
    X, y0, y1 = _neighbours()

    class Counting(RRWithPriorClassifier):
        def _fit_private(self, X, labels, plan, *args):
            fitted = super()._fit_private(X, labels, plan, *args)
            logging.getLogger("sklearn_labeldp").info(
                "counts seen: %s", np.bincount(fitted["privatized_labels_"], minlength=K))
            return fitted

    def make():
        return Counting(epsilon=50.0, classes=range(K), random_state=0,
                        accountant=BudgetAccountant())

    assert _transcript(capfd, caplog, make(), X, y0) != _transcript(capfd, caplog, make(), X, y1)
