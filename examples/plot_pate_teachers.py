"""
=====================================================
PATE under label DP: teachers, noisy votes, a student
=====================================================

PATE (Papernot et al. 2017, 2018) splits the training rows at random into
disjoint parts, fits one *teacher* on each part, and labels a few *queries* by
a noisy vote of the teachers. Under label DP the features are public, so the
student may learn from every training input: the answered queries carry a
label, all the other rows are unlabeled (Malek et al. 2021).

Changing one label changes one teacher's training set, so it moves at most one
vote per query; the noise covers that. Every query is paid for, whether it
is answered or not, so the budget buys few labels, and a semi-supervised
student (here ``LabelSpreading``) spreads them over the unlabeled rows.

We compare, on six Gaussian classes on the unit circle, PATE with
Confident-GNMax against ALIBI (Malek et al. 2021), which noises every label
once, at the same ``(epsilon, delta = 1e-5)`` (ALIBI's Laplace noise is pure
DP). PATE's guarantee here is data-independent; its strength lies elsewhere:
Malek et al. find its *measured* memorization far below its bound.
"""

import warnings

import matplotlib.pyplot as plt
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.semi_supervised import LabelSpreading

from sklearn_labeldp import ALIBIClassifier, PATEClassifier
from sklearn_labeldp.datasets import make_circle_gaussians

N_CLASSES, SIGMA = 6, 0.25
EPSILONS = [1.0, 2.0, 4.0, 8.0]
X, y = make_circle_gaussians(3000, N_CLASSES, sigma=SIGMA, random_state=0)
X_test, y_test = make_circle_gaussians(2000, N_CLASSES, sigma=SIGMA, random_state=1)
classes = range(N_CLASSES)

non_private = KNeighborsClassifier(25).fit(X, y).score(X_test, y_test)
scores = {"PATE (Confident-GNMax)": [], "ALIBI": []}
answered = []
for eps in EPSILONS:
    pate = PATEClassifier(
        KNeighborsClassifier(5),  # the teacher, cloned once per part
        student=LabelSpreading(kernel="knn", n_neighbors=10),
        n_teachers=60,
        n_queries=50,
        epsilon=eps,
        delta=1e-5,
        aggregator="confident_gnmax",
        threshold=0.5,  # answer when about half the teachers agree
        classes=classes,
        random_state=0,
    )
    alibi = ALIBIClassifier(KNeighborsRegressor(25), epsilon=eps, classes=classes,
                            random_state=0)
    with warnings.catch_warnings():
        # LabelSpreading divides by zero for rows no labeled point reaches.
        warnings.simplefilter("ignore", RuntimeWarning)
        pate.fit(X, y)
        scores["PATE (Confident-GNMax)"].append(pate.score(X_test, y_test))
    alibi.fit(X, y)
    scores["ALIBI"].append(alibi.score(X_test, y_test))
    answered.append(pate.n_answered_)
    sigma1 = pate.mechanism_params_["threshold_noise_scale"]
    print(f"eps={eps:g}: PATE {scores['PATE (Confident-GNMax)'][-1]:.3f} "
          f"({pate.n_answered_} of 50 queries answered, selection noise {sigma1:.1f} votes), "
          f"ALIBI {scores['ALIBI'][-1]:.3f}")

# %%
# Accuracy against epsilon
# ------------------------
# PATE spends its whole budget on 50 labels, so it needs a larger epsilon
# than ALIBI, which releases a noisy version of every label, for the same
# accuracy here; the non-private k-NN is the ceiling.

fig, ax = plt.subplots(figsize=(6, 4))
for name, values in scores.items():
    ax.plot(EPSILONS, values, marker="o", label=name)
ax.axhline(non_private, color="gray", linestyle="--", label="non-private k-NN")
ax.axhline(1 / N_CLASSES, color="gray", linestyle=":", label="chance")
ax.set_xscale("log", base=2)
ax.set_xlabel("epsilon (delta = 1e-5 for PATE)")
ax.set_ylabel("test accuracy")
ax.set_title("PATE vs ALIBI, six Gaussian classes")
ax.legend()
fig.tight_layout()
plt.show()
