"""
=============================================
A small CNN with label DP on the digits data
=============================================

The four label-DP learners of Ghazi et al. (2021), Malek et al. (2021) and
Zhao et al. (2024) around one network,
:class:`~sklearn_labeldp.nn.LabelDPNetClassifier` with the small CNN of
Zhao et al. (2024, Section 5.2) (:class:`~sklearn_labeldp.nn.FashionCNN`,
here on scikit-learn's 8x8 digits so that it runs on a CPU in seconds):

* RR (LP-1ST): randomized response, the net trained on hard noisy labels;
* LP-2ST: a second stage whose RRWithPrior uses the first network as prior,
  warm-started from it;
* ALIBI: Laplace noise on the one-hot labels once, and soft labels whose
  posterior is refreshed from the network's predictions after every epoch;
* vector approximation: RAPPOR bit vectors, one network with ten sigmoid
  outputs.

Every fit is 2-label-DP. The Fashion-MNIST version, with the published
numbers beside ours, is ``benchmarks/fashion_mnist.py`` (needs the
``dataset-fashion-mnist`` package).
"""

import matplotlib.pyplot as plt
import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from sklearn_labeldp import RRWithPriorClassifier
from sklearn_labeldp.classifiers import ALIBIClassifier, VectorApproxClassifier
from sklearn_labeldp.nn import FashionCNN, LabelDPNetClassifier

EPSILON = 2.0
X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X / 16, y, test_size=0.3, random_state=0)
classes = np.arange(10)


def network(max_epochs=30):
    return LabelDPNetClassifier(
        FashionCNN, module__input_shape=(1, 8, 8), max_epochs=max_epochs, batch_size=64,
        optimizer=torch.optim.Adam, lr=2e-3,
    )


models = {
    "non-private": network(),
    "RR": RRWithPriorClassifier(network(), epsilon=EPSILON, classes=classes),
    "LP-2ST": RRWithPriorClassifier(network(), epsilon=EPSILON, classes=classes, n_stages=2,
                                    warm_start=True),
    "ALIBI": ALIBIClassifier(network(), epsilon=EPSILON, classes=classes, n_rounds=1),
    "vector approx.": VectorApproxClassifier(network(), epsilon=EPSILON, classes=classes),
}
accuracy = {}
for name, model in models.items():
    model.set_params(random_state=0)
    model.fit(X_train, y_train)
    accuracy[name] = model.score(X_test, y_test)
    spent = getattr(model, "epsilon_", None)
    print(f"{name:15s} test accuracy {accuracy[name]:.3f}   epsilon spent: {spent}")

# %%
# All four spend the same budget; they differ in what they release (a noisy
# label, a noisy one-hot vector, a bit vector) and in how the network learns it.

fig, ax = plt.subplots(figsize=(6, 3))
ax.barh(list(accuracy), list(accuracy.values()), color="tab:blue")
ax.set_xlim(0, 1)
ax.set_xlabel(f"test accuracy (eps = {EPSILON:g} for the private ones)")
ax.invert_yaxis()
fig.tight_layout()
plt.show()
