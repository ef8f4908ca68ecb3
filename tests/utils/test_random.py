import numpy as np
import pytest

from sklearn_labeldp.utils import check_generator, spawn_seeds


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


def test_spawned_seeds_are_distinct_and_reproducible():
    seeds = spawn_seeds(np.random.default_rng(1), 50)
    assert len(set(seeds)) == 50
    assert all(0 <= s < 2**32 for s in seeds)
    assert seeds == spawn_seeds(np.random.default_rng(1), 50)
