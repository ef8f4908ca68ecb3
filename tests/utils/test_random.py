import copy
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import SGDClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_labeldp.utils import (
    DerivedRandomState,
    check_generator,
    derived_random_state,
    forget_derived_seeds,
    spawn_generators,
)


def test_int_seed_is_reproducible_and_none_is_fresh():
    assert check_generator(5).random() == check_generator(5).random()
    assert check_generator(None).random() != check_generator(None).random()


def test_generator_is_used_as_is_and_random_state_is_converted():
    rng = np.random.default_rng(0)
    assert check_generator(rng) is rng
    a = check_generator(np.random.RandomState(3)).random()
    b = check_generator(np.random.RandomState(3)).random()
    assert a == b


@pytest.mark.parametrize("bad", ["seed", 1.5, True, [1, 2]])
def test_bad_random_state(bad):
    with pytest.raises(TypeError, match="random_state must be"):
        check_generator(bad)
    with pytest.raises(TypeError, match="random_state must be"):
        spawn_generators(bad, 2)


def test_spawned_generators_are_distinct_and_reproducible_for_an_int():
    draws = [g.integers(2**63, size=4).tolist() for g in spawn_generators(1, 50)]
    assert len({tuple(d) for d in draws}) == 50
    assert draws == [g.integers(2**63, size=4).tolist() for g in spawn_generators(1, 50)]


def test_none_roots_have_128_bits_of_fresh_entropy():
    (child,) = spawn_generators(None, 1)
    root_entropy = child.bit_generator.seed_seq.entropy
    assert root_entropy >= 2**64  # 128 bits drawn: below 2**64 with probability 2**-64
    assert spawn_generators(None, 1)[0].random() != spawn_generators(None, 1)[0].random()


def test_a_given_generator_advances_and_is_not_replayed_from_its_seed_sequence():
    rng = np.random.default_rng(7)
    before = copy.deepcopy(rng.bit_generator.state)
    first = spawn_generators(rng, 1)[0].random()
    assert rng.bit_generator.state != before
    second = spawn_generators(rng, 1)[0].random()
    assert first != second
    # Spawning from the generator's own (readable) seed sequence gives other children.
    replayed = np.random.default_rng(7).spawn(1)[0].random()
    assert replayed not in (first, second)


def test_derived_random_state_keeps_its_type_through_clone_copy_and_pickle():
    seed = derived_random_state(np.random.default_rng(0))
    for copied in (copy.deepcopy(seed), pickle.loads(pickle.dumps(seed)),
                   clone(SGDClassifier(random_state=seed)).random_state):
        assert isinstance(copied, DerivedRandomState)
        assert copied.get_state()[1].tolist() == seed.get_state()[1].tolist()


def test_forget_derived_seeds_restores_none_on_nested_and_fitted_parts():
    rng = np.random.default_rng(0)
    user_seeded = SGDClassifier(random_state=3)
    pipe = make_pipeline(StandardScaler(), SGDClassifier(random_state=derived_random_state(rng)))
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    pipe.fit(X, y)

    class Holder:
        def __init__(self):
            self.estimator_ = pipe
            self.estimators_ = [user_seeded, {"a": clone(pipe)}]
            self._private = SGDClassifier(random_state=derived_random_state(rng))

        def get_params(self, deep=True):
            return {}

        def set_params(self, **params):
            return self

    holder = forget_derived_seeds(Holder())
    predictions = pipe.predict(X)
    assert pipe.get_params()["sgdclassifier__random_state"] is None
    assert holder.estimators_[1]["a"].get_params()["sgdclassifier__random_state"] is None
    assert user_seeded.random_state == 3  # the user's own seed stays
    np.testing.assert_array_equal(pipe.predict(X), predictions)


def test_secure_streams_use_aes_counter_mode_and_stay_secure_when_spawned():
    randomgen = pytest.importorskip("randomgen")
    generator = check_generator("secure")
    assert isinstance(generator.bit_generator, randomgen.AESCounter)
    children = spawn_generators("secure", 2)
    assert all(isinstance(c.bit_generator, randomgen.AESCounter) for c in children)
    grandchildren = spawn_generators(children[0], 2)
    assert all(isinstance(c.bit_generator, randomgen.AESCounter) for c in grandchildren)
    assert children[0].random() != children[1].random()


def test_secure_without_randomgen_is_a_clear_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "randomgen", None)
    with pytest.raises(ImportError, match=r"sklearn-labeldp\[secure\]"):
        check_generator("secure")
