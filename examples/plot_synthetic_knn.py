"""
=====================================================
Accuracy against the number of classes, kNN learners
=====================================================

The synthetic experiment of Zhao et al. (2024, Section 5.1), reduced: K
Gaussian classes with means equally spaced on the unit circle and a fixed std
``sigma = 0.1`` (so the classes overlap more as K grows). Every method uses
the same k-nearest-neighbours base learner and is 1-label-DP:

* non-private kNN (no privacy at all),
* randomized response (RR, LP-1ST), then a kNN classifier,
* LP-2ST: RR on 60% of the labels, then RRWithPrior on the rest with the
  first-stage kNN as prior,
* ALIBI: Laplace noise on the one-hot labels, Bayesian denoising, and a kNN
  regressor on the soft labels (two rounds),
* vector approximation: each label becomes a randomized bit vector and a kNN
  regressor estimates every coordinate; the prediction is the largest one.

The full version (six values of K, two epsilons, a second regime where sigma
shrinks with K, ten trials) is ``benchmarks/synthetic_knn.py``.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

from sklearn_labeldp.classifiers import (
    ALIBIClassifier,
    RRWithPriorClassifier,
    VectorApproxClassifier,
)
from sklearn_labeldp.datasets import make_circle_gaussians

N_CLASSES = [2, 10, 50]
SIGMA, EPSILON, N_TRAIN, N_TEST, N_TRIALS, N_NEIGHBORS = 0.1, 1.0, 5_000, 2_000, 2, 70


def make_models(n_classes, random_state):
    """The five methods, all with the same kNN base."""
    common = {"epsilon": EPSILON, "classes": range(n_classes), "random_state": random_state}
    return {
        "non-private": KNeighborsClassifier(N_NEIGHBORS),
        "RR": RRWithPriorClassifier(KNeighborsClassifier(N_NEIGHBORS), **common),
        "LP-2ST": RRWithPriorClassifier(
            KNeighborsClassifier(N_NEIGHBORS), n_stages=2, stage_fractions=[0.6, 0.4], **common
        ),
        "ALIBI": ALIBIClassifier(KNeighborsRegressor(N_NEIGHBORS), **common),
        "vector approx.": VectorApproxClassifier(KNeighborsRegressor(N_NEIGHBORS), **common),
    }


start = time.perf_counter()
names = list(make_models(2, 0))
accuracy = np.zeros((N_TRIALS, len(N_CLASSES), len(names)))
for trial in range(N_TRIALS):
    for i, n_classes in enumerate(N_CLASSES):
        X, y = make_circle_gaussians(N_TRAIN, n_classes, sigma=SIGMA, random_state=trial)
        X_test, y_test = make_circle_gaussians(
            N_TEST, n_classes, sigma=SIGMA, random_state=1000 + trial
        )
        for j, model in enumerate(make_models(n_classes, random_state=trial).values()):
            accuracy[trial, i, j] = model.fit(X, y).score(X_test, y_test)

print(f"Test accuracy (%), epsilon = {EPSILON:g}, sigma = {SIGMA}, mean of {N_TRIALS} trials")
print(f"{'K':>4}" + "".join(f"{name:>16}" for name in names))
for i, n_classes in enumerate(N_CLASSES):
    print(f"{n_classes:>4}" + "".join(f"{100 * a:>16.1f}" for a in accuracy[:, i].mean(axis=0)))
print(f"({time.perf_counter() - start:.1f} s)")

# %%
# Accuracy against K. With few classes every private method is close to the
# non-private one; as K grows, randomized response keeps the true label with
# probability ``e^eps / (e^eps + K - 1)`` only, while vector approximation
# flips each bit with a probability that does not depend on K.
fig, ax = plt.subplots(figsize=(6, 4))
for j, name in enumerate(names):
    style = {"color": "gray", "linestyle": "--"} if name == "non-private" else {}
    ax.plot(N_CLASSES, 100 * accuracy[:, :, j].mean(axis=0), marker="o", label=name, **style)
ax.set_xscale("log")
ax.set_xticks(N_CLASSES)
ax.set_xticklabels([str(k) for k in N_CLASSES])
ax.set_xlabel("number of classes K")
ax.set_ylabel("test accuracy (%)")
ax.set_title(f"kNN base (k = {N_NEIGHBORS}), epsilon = {EPSILON:g}")
ax.legend()
fig.tight_layout()
