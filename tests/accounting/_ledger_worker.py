"""A fresh process killed in the middle of a fit, for test_shared_ledger.py.

Usage: ``python _ledger_worker.py ACCOUNTANT READY``. ACCOUNTANT is a base64
pickle of a BudgetAccountant, so this process reaches the ledger exactly as a
joblib worker would. It fits an RRWithPriorClassifier charging that accountant,
whose base estimator creates the file READY and hangs, waiting to be killed, when
it is fitted after the spend has committed and the labels have been privatised
(its first fit is the label-free trial fit that precedes the charge).
"""

import base64
import pickle
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from sklearn_labeldp.classifiers import RRWithPriorClassifier

_FITS = []


class Hang(ClassifierMixin, BaseEstimator):
    def __init__(self, ready=None):
        self.ready = ready

    def fit(self, X, y, sample_weight=None):
        _FITS.append(len(X))
        if len(_FITS) == 1:  # the trial fit, before the charge
            return self
        Path(self.ready).touch()
        while True:
            time.sleep(1.0)

    def predict(self, X):  # pragma: no cover - never reached
        return np.zeros(len(X), dtype=int)


def main(accountant, ready):
    acc = pickle.loads(base64.b64decode(accountant))
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 2)), rng.integers(0, 2, 40)
    RRWithPriorClassifier(Hang(ready), epsilon=1.0, classes=[0, 1], accountant=acc).fit(X, y)
    raise AssertionError("unreachable")


if __name__ == "__main__":
    main(*sys.argv[1:])
