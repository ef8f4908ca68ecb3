"""get_noise_multiplier: one calibration entry point over the neighbouring relations."""

import pytest

from sklearn_labeldp.accounting import (
    calibrate_dp_sgd,
    get_noise_multiplier,
    subsampled_gaussian_epsilon,
    subsampled_gaussian_label_epsilon,
    subsampled_gaussian_label_noise_multiplier,
    subsampled_gaussian_noise_multiplier,
)
from sklearn_labeldp.accounting._noise_multiplier import RELATIONS

RUN = dict(sample_rate=0.02, steps=500)


def _own(relation, method):
    """The relation's own calibration function, called directly."""
    q, steps = RUN["sample_rate"], RUN["steps"]
    if relation == "replace_one":
        return subsampled_gaussian_label_noise_multiplier(1.0, q, steps, 1e-5)
    if relation == "add_remove":
        return subsampled_gaussian_noise_multiplier(1.0, q, steps, 1e-5, method=method)
    return calibrate_dp_sgd(1.0, 1e-5, q, steps, method=method)[0]


@pytest.mark.parametrize("relation", sorted(RELATIONS))
def test_each_relation_is_its_own_calibration_and_meets_the_target(relation):
    for method in RELATIONS[relation].methods:
        sigma = get_noise_multiplier(1.0, 1e-5, **RUN, relation=relation, method=method)
        assert sigma == _own(relation, method)
        if relation == "replace_one":
            assert subsampled_gaussian_label_epsilon(sigma, **RUN, delta=1e-5) <= 1.0
        elif relation == "add_remove":
            assert subsampled_gaussian_epsilon(sigma, **RUN, delta=1e-5, method=method) <= 1.0


def test_the_relations_order_their_noise():
    # A label change costs more than one added example, less than two through
    # group privacy (Zhu, Dong and Wang 2022's pair).
    add_remove, replace_one, group = (
        get_noise_multiplier(1.0, 1e-5, **RUN, relation=relation)
        for relation in ("add_remove", "replace_one", "group_privacy"))
    assert add_remove < replace_one < group


@pytest.mark.parametrize("kwargs, match", [
    ({"relation": "replace"}, "relation"),
    ({"relation": "replace_one", "method": "rdp"}, "method"),
    ({"method": "prv"}, "method"),
])
def test_unknown_relations_and_methods_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        get_noise_multiplier(1.0, 1e-5, **RUN, **kwargs)
