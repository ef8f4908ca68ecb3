"""Every public estimator documents exactly the parameters its ``__init__`` takes."""

import inspect

import pytest

from sklearn_labeldp.utils import all_estimators

docscrape = pytest.importorskip("numpydoc.docscrape")


def documented_parameters(cls):
    """Names in the class docstring's numpydoc Parameters section, in order."""
    sections = docscrape.NumpyDocString(inspect.getdoc(cls) or "")
    # One entry may name several parameters ("x1, x2 : float"); "**kwargs" is "kwargs".
    return [
        name.strip().lstrip("*")
        for parameter in sections["Parameters"]
        for name in parameter.name.split(",")
    ]


ESTIMATORS = all_estimators()
parametrize_estimators = pytest.mark.parametrize(
    "Estimator", [cls for _, cls in ESTIMATORS], ids=[name for name, _ in ESTIMATORS]
)


@parametrize_estimators
def test_documented_parameters_are_the_init_parameters(Estimator):
    documented = documented_parameters(Estimator)
    accepted = inspect.signature(Estimator).parameters
    assert len(documented) == len(set(documented)), f"documented twice: {documented}"
    assert set(documented) == set(accepted), (
        f"undocumented: {sorted(set(accepted) - set(documented))}; "
        f"documented but not accepted: {sorted(set(documented) - set(accepted))}"
    )


@parametrize_estimators
def test_parameters_are_documented_in_signature_order(Estimator):
    documented = documented_parameters(Estimator)
    accepted = [name for name in inspect.signature(Estimator).parameters if name in documented]
    assert [name for name in documented if name in accepted] == accepted
