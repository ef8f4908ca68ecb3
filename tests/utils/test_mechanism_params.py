"""``mechanism_params_``: one key scheme, the renamed keys still read for one release."""

import math
import pickle

import numpy as np
import pytest
from test_common import INSTANCES
from test_fitted_state import fitted_on_wine

from sklearn_labeldp.accounting import BudgetAccountant
from sklearn_labeldp.classifiers import ALIBIClassifier
from sklearn_labeldp.utils._mechanism_params import RENAMED_KEYS, MechanismParams


@pytest.mark.parametrize("estimator", INSTANCES, ids=lambda e: type(e).__name__)
def test_no_estimator_records_a_renamed_key(estimator):
    model, _ = fitted_on_wine(estimator)
    params = getattr(model, "mechanism_params_", None)
    if params is None:
        pytest.skip("no mechanism_params_")
    assert isinstance(params, MechanismParams)
    assert not set(params) & set(RENAMED_KEYS), "a key renamed for the one scheme is back"


def test_a_renamed_key_reads_its_new_name_with_a_future_warning():
    X = np.random.default_rng(0).normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    clf = ALIBIClassifier(epsilon=2.0, classes=[0, 1], random_state=0,
                          accountant=BudgetAccountant(math.inf, 1.0)).fit(X, y)
    params = clf.mechanism_params_
    assert params["noise_scale"] == 1.0  # 2 / epsilon
    with pytest.warns(FutureWarning, match=r"mechanism_params_\['scale'\] is now "
                                           r"mechanism_params_\['noise_scale'\]"):
        assert params["scale"] == 1.0
    with pytest.warns(FutureWarning):
        assert params.get("scale") == 1.0
    assert params.get("sigma1", "absent") == "absent"  # renamed, but not this estimator's
    with pytest.raises(KeyError):
        params["sigma1"]
    assert "scale" not in params  # membership is the new scheme's
    again = pickle.loads(pickle.dumps(clf)).mechanism_params_
    assert isinstance(again, MechanismParams) and again == params
