import logging

import pytest


@pytest.fixture
def quiet_accountant():
    """dp-accounting (through absl) logs a warning for every fractional Renyi order it skips."""
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)
    yield
    absl.setLevel(level)
