"""LabelDP-Pro's ALTCONV denoiser (Ghazi et al. 2024) and DP-SGD denoised by it (not exported)."""

import importlib.util
import itertools
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")
pytest.importorskip("opacus")
pytest.importorskip("dp_accounting")

from scipy.optimize import minimize  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

from sklearn_labeldp.accounting import BudgetAccountant  # noqa: E402
from sklearn_labeldp.nn import MLP, DPSGDClassifier, LabelDPNetClassifier  # noqa: E402
from sklearn_labeldp.nn._labeldp_pro import (  # noqa: E402
    AltConvDenoiser,
    ClassGradients,
    LabelDPProClassifier,
    largest_eigenvalue,
    project_onto_hull,
    project_onto_simplex,
)

pytestmark = pytest.mark.usefixtures("quiet_accountant")


def _tiny_net(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 3))


def _materialised(net, x, max_norm=None):
    """G column by column with plain autograd, in the order (row, class)."""
    columns = []
    for i, k in itertools.product(range(len(x)), range(3)):
        net.zero_grad()
        (-torch.log_softmax(net(x[i:i + 1]), -1)[0, k]).backward()
        columns.append(torch.cat([p.grad.flatten() for p in net.parameters()]))
    G = torch.stack(columns, 1).double()
    if max_norm is not None:
        G = G * (max_norm / G.norm(dim=0)).clamp(max=1)
    return G


def _flat(net, tensors):
    return torch.cat([tensors[name].flatten() for name, _ in net.named_parameters()]).double()


def _params(net):
    return {name: p.detach() for name, p in net.named_parameters()}


def _simplex_brute_force(v):
    """The simplex projection by enumerating supports: exact for a short vector."""
    best, best_distance = None, np.inf
    for size in range(1, len(v) + 1):
        for support in itertools.combinations(range(len(v)), size):
            x = np.zeros_like(v)
            x[list(support)] = v[list(support)] - (v[list(support)].sum() - 1) / size
            if x.min() >= 0 and np.sum((x - v) ** 2) < best_distance:
                best, best_distance = x, np.sum((x - v) ** 2)
    return best


def test_simplex_projection_is_exact():
    rng = np.random.default_rng(0)
    for scale in (0.1, 1.0, 10.0):
        v = rng.normal(scale=scale, size=(20, 6))
        projected = project_onto_simplex(torch.as_tensor(v)).numpy()
        for row, expected in zip(projected, map(_simplex_brute_force, v), strict=True):
            np.testing.assert_allclose(row, expected, atol=1e-12)
    # A point of the simplex is its own projection; ties and a single coordinate.
    inside = torch.tensor([0.2, 0.3, 0.5], dtype=torch.float64)
    torch.testing.assert_close(project_onto_simplex(inside), inside)
    torch.testing.assert_close(project_onto_simplex(torch.tensor([3.0, 3.0])),
                               torch.tensor([0.5, 0.5]))
    assert project_onto_simplex(torch.tensor([-7.0])).tolist() == [1.0]


@pytest.mark.parametrize("max_norm", [None, 0.3])
def test_products_equal_the_materialised_matrix(max_norm):
    net = _tiny_net()
    x = torch.randn(6, 5, generator=torch.Generator().manual_seed(1))
    G = _materialised(net, x, max_norm)
    gradients = ClassGradients(net, _params(net), {}, x, max_norm)
    u = torch.rand(6, 3, generator=torch.Generator().manual_seed(2))
    v = {name: torch.randn(p.shape, generator=torch.Generator().manual_seed(3))
         for name, p in net.named_parameters()}
    torch.testing.assert_close(_flat(net, gradients.matvec(u)), G @ u.flatten().double(),
                               atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(gradients.rmatvec(v).flatten().double(), G.T @ _flat(net, v),
                               atol=1e-5, rtol=1e-5)
    with torch.no_grad():  # as inside the optimizer's step
        torch.testing.assert_close(gradients.rmatvec(v).flatten().double(),
                                   G.T @ _flat(net, v), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(_flat(net, gradients.matvec(u)), G @ u.flatten().double(),
                                   atol=1e-5, rtol=1e-5)
    eigenvalue = torch.linalg.eigvalsh(G.T @ G).max().item()
    assert largest_eigenvalue(gradients, u, n_iter=200) == pytest.approx(eigenvalue, rel=1e-3)


def test_per_class_gradients_are_clipped():
    net = _tiny_net()
    x = 5 * torch.randn(6, 5, generator=torch.Generator().manual_seed(1))
    raw = _materialised(net, x).norm(dim=0)
    assert raw.max() > 2.0 > raw.min()  # some columns clipped, some not
    gradients = ClassGradients(net, _params(net), {}, x, 2.0)
    torch.testing.assert_close(gradients.scale.flatten().double(), (2.0 / raw).clamp(max=1),
                               atol=1e-5, rtol=1e-5)
    u = torch.eye(18, dtype=torch.float32)
    columns = torch.stack([_flat(net, gradients.matvec(e.view(6, 3))) for e in u], 1)
    torch.testing.assert_close(columns.norm(dim=0), raw.clamp(max=2.0), atol=1e-5, rtol=1e-5)


def test_projection_lies_in_the_hull_and_matches_a_qp():
    net = _tiny_net()
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(4))
    G = _materialised(net, x, 1.0).numpy()
    gradients = ClassGradients(net, _params(net), {}, x, 1.0)
    target = {name: torch.randn(p.shape, generator=torch.Generator().manual_seed(5))
              for name, p in net.named_parameters()}
    g = _flat(net, target).numpy()
    alpha = project_onto_hull(gradients, target, n_steps=3000).double().flatten()
    assert alpha.min() >= 0
    assert alpha.sum().item() == pytest.approx(1, abs=1e-5)
    # The projected point is unique (the coefficients need not be): compare points.
    m = G.shape[1]
    qp = minimize(lambda a: np.sum((G @ a - g) ** 2), np.full(m, 1 / m),
                  jac=lambda a: 2 * G.T @ (G @ a - g), bounds=[(0, None)] * m,
                  constraints={"type": "eq", "fun": lambda a: a.sum() - 1}, method="SLSQP",
                  options={"ftol": 1e-14, "maxiter": 1000})
    np.testing.assert_allclose(G @ alpha.numpy(), G @ qp.x, atol=1e-4)
    # A point of the hull projects onto itself.
    inside = torch.as_tensor(G @ qp.x)
    at_inside = {}
    start = 0
    for name, p in net.named_parameters():
        at_inside[name] = inside[start:start + p.numel()].view_as(p).float()
        start += p.numel()
    again = project_onto_hull(gradients, at_inside, n_steps=3000).double().flatten()
    np.testing.assert_allclose(G @ again.numpy(), G @ qp.x, atol=1e-4)


def _attached(smoothing, steps=500, alt_batch_size=4):
    net = _tiny_net()
    X = np.random.default_rng(6).normal(size=(4, 5)).astype(np.float32)
    denoiser = AltConvDenoiser(alt_batch_size, smoothing, steps, "auto", 1.0,
                               np.random.default_rng(0))
    denoiser.attach(net, X)
    for p in net.parameters():
        p.grad = torch.randn(p.shape, generator=torch.Generator().manual_seed(7))
    return net, torch.as_tensor(X), denoiser


@pytest.mark.parametrize("smoothing", [0.0, 0.75, 1.0])
def test_smoothing_mixes_the_coefficients_with_uniform_weights(smoothing):
    net, X, denoiser = _attached(smoothing)
    G = _materialised(net, X, 1.0)
    noisy = {name: p.grad.clone() for name, p in net.named_parameters()}
    alpha = project_onto_hull(ClassGradients(net, _params(net), {}, X, 1.0), noisy,
                              n_steps=500).double().flatten()
    denoiser(list(net.parameters()))
    expected = G @ (smoothing * alpha + (1 - smoothing) / alpha.numel())
    torch.testing.assert_close(_flat(net, {n: p.grad for n, p in net.named_parameters()}),
                               expected, atol=1e-5, rtol=1e-5)
    denoiser.detach()
    assert set(vars(denoiser)) == {"alt_batch_size", "smoothing", "projection_steps",
                                   "projection_lr", "max_norm", "rng"}
    assert denoiser.rng is None


def test_denoiser_samples_alternative_batches_without_replacement():
    _, _, denoiser = _attached(0.75, alt_batch_size=3)
    rows = [denoiser.sample_rows() for _ in range(50)]
    assert all(len(set(r)) == 3 and r.max() < 4 for r in rows)
    assert len({tuple(r) for r in rows}) > 1


def _digits(n=300):
    X, y = load_digits(return_X_y=True)
    return (X[:n] / 16).astype(np.float32), y[:n]


def _classifier(denoiser="none", denoiser_params=None, **kwargs):
    net = LabelDPNetClassifier(MLP, max_epochs=2, batch_size=64, lr=0.1,
                               module__hidden_units=(8,))
    if denoiser == "none":
        return DPSGDClassifier(net, epsilon=0.5, classes=range(10), random_state=0, **kwargs)
    if denoiser_params is None:
        denoiser_params = {"projection_steps": 5, "alt_batch_size": 32}
    return LabelDPProClassifier(net, epsilon=0.5, classes=range(10), random_state=0,
                                denoiser_params=denoiser_params, **kwargs)


def test_record_equals_plain_dp_sgd_and_drops_the_example_guarantee():
    X, y = _digits()
    plain = _classifier().fit(X, y)
    pro = _classifier("alt_conv").fit(X, y)
    assert (pro.epsilon_, pro.delta_) == (plain.epsilon_, plain.delta_)
    assert pro.privacy_spend_.description == plain.privacy_spend_.description
    assert pro.privacy_spend_.budget == plain.privacy_spend_.budget
    assert np.isfinite(plain.example_epsilon_)
    assert pro.example_epsilon_ == np.inf
    assert pro.privacy_spend_.params["example_epsilon"] == np.inf
    params = dict(pro.mechanism_params_)
    assert {k: params[k] for k in ("denoiser", "alt_batch_size", "smoothing", "projection_steps",
                                   "projection_lr", "clip_per_class")} == {
        "denoiser": "alt_conv", "alt_batch_size": 32, "smoothing": 0.75,
        "projection_steps": 5, "projection_lr": "auto", "clip_per_class": False}
    assert "denoiser" not in plain.mechanism_params_
    # The training settings are DP-SGD's own.
    shared = {k: v for k, v in params.items() if k in plain.mechanism_params_}
    assert shared == dict(plain.mechanism_params_)
    assert pro.score(X, y) >= 0


def test_default_alternative_batch_is_the_expected_batch():
    X, y = _digits()
    pro = LabelDPProClassifier(epsilon=0.5, classes=range(10), random_state=0,
                               denoiser_params={"projection_steps": 2}).fit(X, y)
    assert pro.mechanism_params_["alt_batch_size"] == round(
        pro.mechanism_params_["sample_rate"] * len(X))


def test_alternative_batches_do_not_depend_on_the_labels(monkeypatch):
    drawn = []
    original = AltConvDenoiser.sample_rows

    def recording(self):
        rows = original(self)
        drawn.append(rows.tolist())
        return rows

    monkeypatch.setattr(AltConvDenoiser, "sample_rows", recording)
    X, y = _digits()
    traces = []
    for labels in (y, (y + 3) % 10, np.zeros_like(y)):
        drawn.clear()
        _classifier("alt_conv").fit(X, labels)
        traces.append(list(drawn))
    assert len(traces[0]) > 2
    assert traces[0] == traces[1] == traces[2]


def test_clone_pickle_and_released_state():
    X, y = _digits()
    clf = _classifier("alt_conv", {"smoothing": 0.5, "projection_steps": 3})
    cloned = clone(clf)
    assert cloned.get_params()["denoiser_params"] == {"smoothing": 0.5, "projection_steps": 3}
    clf.fit(X, y)
    assert clf.denoiser_params == {"smoothing": 0.5, "projection_steps": 3}  # not mutated
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded fit's replay-key warning
        blob = pickle.dumps(clf)
    assert b"AltConvDenoiser" not in blob
    restored = pickle.loads(blob)
    np.testing.assert_array_equal(restored.predict(X), clf.predict(X))
    for p in restored.estimator_.module_.parameters():
        assert p.grad is None


def test_attacks_on_the_released_network_with_the_denoiser():
    # The denoiser reads features only; the released network is rebuilt as for
    # plain DP-SGD, so the gradient and loss attacks find nothing to read.
    spec = importlib.util.spec_from_file_location(
        "_dp_sgd_attacks", Path(__file__).with_name("test_dp_sgd_attacks.py"))
    attacks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(attacks)

    X, y, n_classes = attacks._data("wine")
    net = LabelDPNetClassifier(MLP, max_epochs=2, batch_size=-1, lr=attacks.LR,
                               module__hidden_units=(64,), device="cpu")
    clf = LabelDPProClassifier(net, epsilon=attacks.EPSILON, max_grad_norm=attacks.CLIP,
                               classes=range(n_classes), random_state=0,
                               denoiser_params={"projection_steps": 5}).fit(X, y)
    for held in (attacks._pickled(clf), clf):
        accuracy = np.mean(attacks.summed_gradient_attack(held, X, n_classes) == y)
        assert accuracy <= attacks._dp_bound(attacks.EPSILON, n_classes, len(y)), accuracy
        for p in held.estimator_.module_.parameters():
            assert not attacks._gradient_like(p)
        for _, callback in held.estimator_.callbacks_:
            assert getattr(callback, "best_score_", np.inf) in (np.inf, -np.inf)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"denoiser_params": {"lambda": 0.5}}, "unknown denoiser_params"),
        ({"denoiser_params": {"smoothing": 1.5}}, "smoothing"),
        ({"denoiser_params": {"projection_steps": 0}},
         "projection_steps"),
        ({"denoiser_params": {"projection_lr": -1.0}}, "projection_lr"),
        ({"denoiser_params": {"alt_batch_size": 0}}, "alt_batch_size"),
        ({"denoiser_params": {"clip_per_class": "yes"}},
         "clip_per_class"),
        ({"denoiser_params": [("smoothing", 0.5)]}, "denoiser_params"),
    ],
)
def test_bad_parameters_raise_before_the_charge(params, match):
    X, y = _digits(100)
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    clf = LabelDPProClassifier(epsilon=0.5, classes=range(10), random_state=0,
                               accountant=accountant, **params)
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)
    assert not accountant.spends


def test_the_optimizer_steps_with_the_denoised_gradient(monkeypatch):
    # A denoiser that returns 0 leaves the network where it started: the step
    # reads the replaced .grad, not Opacus's noisy average.
    def zero(self, params):
        for p in params:
            p.grad = torch.zeros_like(p)

    monkeypatch.setattr(AltConvDenoiser, "__call__", zero)
    X, y = _digits()
    untrained = _classifier()
    untrained.estimator.set_params(lr=0.0)
    untrained.fit(X, y)
    zeroed = _classifier("alt_conv").fit(X, y)
    trained = _classifier().fit(X, y)
    start = list(untrained.estimator_.module_.parameters())
    for p, q in zip(start, zeroed.estimator_.module_.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0)
    assert not all(torch.equal(p, q) for p, q in zip(
        start, trained.estimator_.module_.parameters(), strict=True))
