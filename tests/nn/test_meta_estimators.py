"""The label-DP meta-estimators around a network: which target each trains on."""

import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from sklearn.base import clone  # noqa: E402
from sklearn.datasets import make_blobs  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from sklearn_labeldp import RRWithPriorClassifier  # noqa: E402
from sklearn_labeldp.classifiers import ALIBIClassifier, VectorApproxClassifier  # noqa: E402
from sklearn_labeldp.nn import LabelDPNetClassifier  # noqa: E402

N_CLASSES = 3


class TinyMLP(torch.nn.Module):
    def __init__(self, n_outputs=N_CLASSES, n_features=4):
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(n_features, 16), torch.nn.ReLU(), torch.nn.Linear(16, n_outputs)
        )

    def forward(self, X):
        return self.layers(X)


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(400, n_features=4, centers=N_CLASSES, cluster_std=1.0, random_state=0)
    return X.astype(np.float32), y


def net(**params):
    defaults = {"max_epochs": 3, "batch_size": 64, "lr": 0.1}
    return LabelDPNetClassifier(TinyMLP, **{**defaults, **params})


def params_of(model):
    return [p.detach().clone() for p in model.module_.parameters()]


def test_lp_mst_warm_starts_each_stage_from_the_previous_network(blobs):
    X, y = blobs
    # With a zero learning rate training leaves the weights as they start, so
    # stage 2 holds exactly stage 1's weights iff it was warm-started.
    clf = RRWithPriorClassifier(
        net(lr=0.0), epsilon=4.0, classes=np.arange(N_CLASSES), n_stages=2, warm_start=True,
        random_state=0,
    ).fit(X, y)
    first, second = clf.estimators_
    assert second is not first and second.module_ is not first.module_
    for a, b in zip(params_of(first), params_of(second), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    cold = RRWithPriorClassifier(  # warm_start="auto" would warm-start a network
        net(lr=0.0), epsilon=4.0, classes=np.arange(N_CLASSES), n_stages=2, warm_start=False,
        random_state=0,
    ).fit(X, y)
    assert any(
        not torch.equal(a, b)
        for a, b in zip(params_of(cold.estimators_[0]), params_of(cold.estimators_[1]),
                        strict=True)
    )


def test_lp_mst_with_a_network_learns_and_is_reproducible(blobs):
    X, y = blobs
    make = lambda: RRWithPriorClassifier(  # noqa: E731
        net(max_epochs=10), epsilon=2.0, classes=np.arange(N_CLASSES), n_stages=2,
        warm_start=True, random_state=0,
    )
    a, b = make().fit(X, y), make().fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.score(X, y) > 0.9


def test_alibi_refreshes_the_posterior_every_epoch_from_one_release(blobs, monkeypatch):
    X, y = blobs
    calls = []
    soft_labels = ALIBIClassifier._soft_labels

    def spy(self, noisy, prior, scale):
        calls.append((noisy, prior))
        return soft_labels(self, noisy, prior, scale)

    monkeypatch.setattr(ALIBIClassifier, "_soft_labels", spy)
    clf = ALIBIClassifier(
        net(max_epochs=4), epsilon=2.0, classes=np.arange(N_CLASSES), n_rounds=1,
        random_state=0,
    ).fit(X, y)
    # One posterior before training (uniform prior), one after each epoch but the last.
    assert len(calls) == 4
    assert calls[0][1] is None
    assert all(noisy is calls[0][0] for noisy, _ in calls)  # the noise is drawn once
    for _, prior in calls[1:]:
        assert prior.shape == (len(X), N_CLASSES)
        np.testing.assert_allclose(prior.sum(axis=1), 1.0, rtol=1e-5)
    assert not np.allclose(calls[1][1], calls[2][1])  # the network moved between epochs
    assert clf.estimator_.target_kind_ == "soft"
    assert clf.score(X, y) > 0.9


def test_vector_approximation_trains_one_network_with_k_sigmoid_outputs(blobs):
    X, y = blobs
    clf = VectorApproxClassifier(
        net(max_epochs=10), epsilon=2.0, classes=np.arange(N_CLASSES), random_state=0
    ).fit(X, y)
    model = clf.estimator_
    assert isinstance(model, LabelDPNetClassifier) and model.target_kind_ == "bits"
    scores = model.predict_proba(X)
    assert scores.shape == (len(X), N_CLASSES)
    assert np.all((scores >= 0) & (scores <= 1))
    assert not np.allclose(scores.sum(axis=1), 1.0)  # K sigmoids, not a softmax
    assert clf.score(X, y) > 0.9


def test_meta_estimator_with_a_network_clones_pickles_and_pipelines(blobs):
    X, y = blobs
    clf = ALIBIClassifier(
        net(), epsilon=2.0, classes=np.arange(N_CLASSES), n_rounds=1, random_state=0
    )
    assert clf.get_params()["estimator__max_epochs"] == 3
    twin = clone(clf).set_params(estimator__max_epochs=2)
    assert twin.estimator.max_epochs == 2 and clf.estimator.max_epochs == 3
    pipe = make_pipeline(StandardScaler(), clf).fit(X, y)
    restored = pickle.loads(pickle.dumps(pipe))
    np.testing.assert_array_equal(restored.predict_proba(X), pipe.predict_proba(X))
    assert pipe[-1].epsilon_ == 2.0


def test_refresh_needs_the_whole_training_set():
    from skorch.dataset import ValidSplit

    X, y = make_blobs(60, n_features=4, centers=N_CLASSES, random_state=0)
    soft = np.full((60, N_CLASSES), 1 / N_CLASSES)
    with pytest.raises(ValueError, match="train_split=None"):
        net(train_split=ValidSplit(3)).fit_soft(X.astype(np.float32), soft, refresh=lambda p: p)
