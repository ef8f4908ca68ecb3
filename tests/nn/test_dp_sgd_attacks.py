"""Attacks on what DPSGDClassifier returns: label reconstruction from the released network.

The attacker holds the fitted classifier (every attribute, tensors' gradients
and attributes, callbacks' state) or only its pickle, and knows the public
features and the network's configuration (``lr``, plain SGD, full batches).
Labels are drawn uniformly at random, independently of the features, so no
guess can beat label DP's bound: an ``epsilon``-label-DP fit lets no attacker
guess a uniform label among ``K`` with probability above
``e^epsilon / (e^epsilon + K - 1)`` (plus ``delta``), the randomized-response
optimum (Ghazi et al. 2021). Each attack falls back to the network's own
prediction when the state it reads is absent, as a real attacker would.

Both attacks recover every label from the network returned by commit bd705e5
(which returned the trained object) and fail on the rebuilt network.
"""

import copy
import math
import pickle
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")
pytest.importorskip("opacus")
pytest.importorskip("dp_accounting")

from sklearn.datasets import load_breast_cancer, load_wine  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from torch.func import functional_call, grad, vmap  # noqa: E402

from sklearn_labeldp.nn import MLP, DPSGDClassifier, LabelDPNetClassifier  # noqa: E402

EPSILON = 1.0
LR = 0.1
CLIP = 1.0


pytestmark = pytest.mark.usefixtures("quiet_accountant")


def _data(name):
    X, _ = {"wine": load_wine, "breast_cancer": load_breast_cancer}[name](return_X_y=True)
    X = StandardScaler().fit_transform(X).astype(np.float32)
    n_classes = 3 if name == "wine" else 2
    # Uniform labels independent of X: the DP bound is then the best any guess can do.
    y = np.random.default_rng(11).integers(n_classes, size=len(X))
    return X, y, n_classes


def _fit(X, y, n_classes, *, max_epochs, epsilon=EPSILON):
    net = LabelDPNetClassifier(MLP, max_epochs=max_epochs, batch_size=-1, lr=LR,
                               module__hidden_units=(64,), device="cpu")
    clf = DPSGDClassifier(net, epsilon=epsilon, max_grad_norm=CLIP, classes=range(n_classes),
                          random_state=0)  # seeded for a reproducible test, not used by attacks
    return clf.fit(X, y)


def _pickled(clf):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded fit's replay-key warning
        return pickle.loads(pickle.dumps(clf))


def _dp_bound(epsilon, n_classes, n_guesses):
    """Label DP's bound on the guessing rate, plus three binomial standard deviations."""
    bound = math.exp(epsilon) / (math.exp(epsilon) + n_classes - 1)
    return bound + 3 * math.sqrt(bound * (1 - bound) / n_guesses)


def _gradient_like(parameter):
    """Any tensor kept on a parameter with its shape: its ``.grad`` and tensor attributes."""
    found = {}
    if parameter.grad is not None:
        found["grad"] = parameter.grad
    for name, value in vars(parameter).items():
        if isinstance(value, torch.Tensor) and value.shape == parameter.shape:
            found[name] = value
    return found


def _per_example_clipped_gradients(module, params, X, label):
    """Each row's gradient of the summed cross-entropy for one candidate label, clipped to CLIP."""

    def loss(p, x, y):
        return torch.nn.functional.cross_entropy(functional_call(module, p, (x[None],)), y[None],
                                                 reduction="sum")

    X = torch.as_tensor(X, dtype=torch.float64)
    y = torch.full((len(X),), label, dtype=torch.long)
    grads = vmap(grad(loss), in_dims=(None, 0, 0))(params, X, y)
    flat = torch.cat([grads[name].reshape(len(X), -1) for name in params], dim=1)
    # Opacus's clipping factor, its 1e-6 included.
    factor = (CLIP / (flat.norm(dim=1) + 1e-6)).clamp(max=1.0)
    return flat * factor[:, None]


def summed_gradient_attack(clf, X, n_classes):
    """Every label from the sum of the last step's clipped per-example gradients, if kept.

    Opacus leaves ``summed_grad``, ``sum_i clip(g_i(theta_prev, y_i))``, on
    every parameter. It is linear in the one-hot labels, with the clipped
    gradient of each row for each candidate label as coefficients: a
    least-squares solve with more parameters than unknowns reads the labels
    off. ``theta_prev`` is the parameters before that step: with plain SGD,
    ``theta_prev = theta + lr * grad`` from the noisy ``.grad``, or, without
    it (a pickle), ``theta + lr * summed_grad / n`` (the noise left out).
    """
    net = clf.estimator_
    module = net.module_
    named = dict(module.named_parameters())
    kept = {name: _gradient_like(p) for name, p in named.items()}
    if not all("summed_grad" in found for found in kept.values()):
        return clf.predict(X)  # nothing to read: the network's own guess
    n = len(X)
    previous = {}
    for name, p in named.items():
        step = kept[name]["grad"] if "grad" in kept[name] else kept[name]["summed_grad"] / n
        previous[name] = (p.detach() + LR * step).double()
    module = copy.deepcopy(module).double()
    summed = torch.cat([kept[name]["summed_grad"].reshape(-1) for name in named]).double()
    columns = [_per_example_clipped_gradients(module, previous, X, k) for k in range(n_classes)]
    base = columns[0].sum(0)
    design = torch.cat([(c - columns[0]).T for c in columns[1:]], dim=1)
    z = torch.linalg.lstsq(design, (summed - base)[:, None]).solution[:, 0]
    z = z.reshape(n_classes - 1, n).T
    scores = torch.cat([(1 - z.sum(1))[:, None], z], dim=1)
    return scores.argmax(1).numpy()


def best_loss_attack(clf, X, y, targets, n_classes):
    """One label at a time from the scoring callbacks' best epoch loss, knowing all others.

    skorch's ``train_loss`` callback keeps ``best_score_``, the lowest epoch
    loss on the true labels; with one full-batch epoch it is the summed
    cross-entropy at the initial parameters, ``theta + lr * grad`` under plain
    SGD. Of the candidate labels of a target row, the one whose total loss
    matches it is the label.
    """
    net = clf.estimator_
    best = [getattr(cb, "best_score_", None) for _, cb in net.callbacks_]
    best = [float(b) for b in best if b is not None and np.isfinite(b)]
    named = dict(net.module_.named_parameters())
    if not best or not all(p.grad is not None for p in named.values()):
        return clf.predict(X[targets])
    # Back to the parameters the loss was computed at (a copy: the model is left as it was).
    initial = {name: p.detach() + LR * p.grad for name, p in named.items()}
    with torch.no_grad():
        logits = functional_call(net.module_, initial, (torch.as_tensor(X),)).double()
    losses = -torch.log_softmax(logits, dim=1).numpy()  # (n, K): each row, each label
    known = losses[np.arange(len(X)), y]
    guesses = []
    for i in targets:
        others = known.sum() - known[i]
        guesses.append(int(np.argmin(np.abs(others + losses[i] - best[0]))))
    return np.array(guesses)


@pytest.mark.parametrize("name", ["wine", "breast_cancer"])
def test_summed_gradient_attack_reads_no_label(name):
    # Fails on bd705e5: the returned network kept Opacus's summed_grad, and this
    # attack recovered all labels, in memory and from the pickle.
    X, y, n_classes = _data(name)
    clf = _fit(X, y, n_classes, max_epochs=2)
    bound = _dp_bound(EPSILON, n_classes, len(y))
    for held in (_pickled(clf), clf):
        accuracy = np.mean(summed_gradient_attack(held, X, n_classes) == y)
        assert accuracy <= bound, accuracy
        for p in held.estimator_.module_.parameters():
            assert not _gradient_like(p)


def test_best_loss_attack_reads_no_label():
    # Fails on bd705e5: train_loss's best_score_ (the true labels' loss) was kept,
    # and this attack recovered every target label knowing the others.
    X, y, n_classes = _data("wine")
    clf = _fit(X, y, n_classes, max_epochs=1)
    targets = np.arange(0, len(y), 3)
    accuracy = np.mean(best_loss_attack(clf, X, y, targets, n_classes) == y[targets])
    assert accuracy <= _dp_bound(EPSILON, n_classes, len(targets)), accuracy
    for held in (_pickled(clf), clf):
        for _, callback in held.estimator_.callbacks_:
            assert getattr(callback, "best_score_", np.inf) in (np.inf, -np.inf)
