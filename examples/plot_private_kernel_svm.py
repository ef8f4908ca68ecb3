"""
=====================================================
A label-DP kernel SVM with random Fourier features
=====================================================

Two interleaved half moons cannot be separated by a line. A kernel SVM separates
them, and Chaudhuri, Monteleoni and Sarwate (2011) show how to make one private:
map every example through a *data-independent* random feature map whose outputs
lie in the unit ball, then train a private linear SVM on the mapped rows.

:class:`~sklearn_labeldp.linear_model.NormalizedRandomFourierFeatures` is that
map: scikit-learn's ``RBFSampler`` features divided by the constant ``sqrt(2)``,
so that every row has norm at most 1, drawn from ``random_state`` and the number
of features only. It feeds
:class:`~sklearn_labeldp.linear_model.DPLinearSVC` (Huber hinge loss, objective
perturbation) with ``data_norm=1``. The features are public and only the labels
are private; the model is ``epsilon``-label-DP.

We compare, at a few ``epsilon``, the private kernel SVM with the private
*linear* SVM on the raw coordinates (rows clipped to the public bound 2.5, which
holds all but a few of them), and draw the decision boundaries.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons
from sklearn.pipeline import make_pipeline

from sklearn_labeldp.linear_model import DPLinearSVC, NormalizedRandomFourierFeatures

start = time.perf_counter()
X, y = make_moons(10_000, noise=0.2, random_state=0)
X_test, y_test = make_moons(5_000, noise=0.2, random_state=1)
EPSILONS = [0.25, 1.0, 4.0]
N_TRIALS = 3


def kernel_svm(epsilon, seed):
    return make_pipeline(
        NormalizedRandomFourierFeatures(100, gamma=1.0, random_state=seed),
        DPLinearSVC(epsilon=epsilon, C=100.0, data_norm=1.0, solver="objective", classes=[0, 1],
                    random_state=seed),
    )


def linear_svm(epsilon, seed):
    return DPLinearSVC(epsilon=epsilon, C=100.0, data_norm=2.5, solver="objective", classes=[0, 1],
                       random_state=seed)


# %%
# Test accuracy
# -------------
# Each private fit draws its own noise: we average a few seeds. With objective
# perturbation the noise vector has a norm of order ``n_components / epsilon``
# before it is divided by ``n``: more random features approximate the kernel
# better but also receive more noise, so at small ``epsilon`` a moderate
# ``n_components`` (here 100) works best.

models = {"linear DP-SVM": linear_svm, "kernel DP-SVM": kernel_svm}
accuracy = {name: np.zeros((N_TRIALS, len(EPSILONS))) for name in models}
for name, make_model in models.items():
    for j, eps in enumerate(EPSILONS):
        for seed in range(N_TRIALS):
            model = make_model(eps, seed).fit(X, y)
            accuracy[name][seed, j] = model.score(X_test, y_test)

print(f"Test accuracy on two moons, n = {len(y)}, mean of {N_TRIALS} seeds")
print(f"{'epsilon':>8}" + "".join(f"{name:>16}" for name in models))
for j, eps in enumerate(EPSILONS):
    print(f"{eps:>8g}" + "".join(f"{accuracy[name][:, j].mean():>16.3f}" for name in models))

# %%
# Decision boundaries
# -------------------
# The linear model can only cut the plane in two; the kernel model follows the
# moons, and its boundary sharpens as ``epsilon`` grows.

xx, yy = np.meshgrid(np.linspace(-1.7, 2.7, 200), np.linspace(-1.2, 1.7, 150))
grid = np.column_stack([xx.ravel(), yy.ravel()])
panels = [("linear DP-SVM", linear_svm, 1.0)] + [
    ("kernel DP-SVM", kernel_svm, eps) for eps in EPSILONS
]
fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.6), sharey=True)
shown = np.random.default_rng(0).choice(len(y_test), 600, replace=False)
for ax, (name, make_model, eps) in zip(axes, panels, strict=True):
    model = make_model(eps, 0).fit(X, y)
    scores = model.decision_function(grid).reshape(xx.shape)
    ax.contourf(xx, yy, scores > 0, levels=[-0.5, 0.5, 1.5], colors=["#c6dbef", "#fdd0a2"])
    ax.contour(xx, yy, scores, levels=[0.0], colors="k", linewidths=1)
    ax.scatter(*X_test[shown].T, c=y_test[shown], cmap="coolwarm", s=6, edgecolors="none")
    ax.set_title(f"{name}, eps={eps:g}\ntest accuracy {model.score(X_test, y_test):.3f}")
    ax.set_xlabel("$x_1$")
axes[0].set_ylabel("$x_2$")
fig.tight_layout()
print(f"ran in {time.perf_counter() - start:.1f} s")
plt.show()
