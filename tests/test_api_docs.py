"""The API reference's table of DP outputs says what the estimators declare."""

import re
from pathlib import Path

import pytest

from sklearn_labeldp.utils import all_estimators

API = Path(__file__).resolve().parents[1] / "doc" / "api.rst"


def _table():
    text = API.read_text()
    section = text.split(".. _dp-outputs:", 1)[1].split("\n\n``sklearn_labeldp.", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"``(\w+)``\s{2,}(.+)$", line)
        if match:
            rows[match.group(1)] = set(re.findall(r"``([\w.]+)``", match.group(2)))
    return rows


def _declared():
    pytest.importorskip("torch")
    return {
        name: {pattern.split(".*")[0].rsplit("._", 1)[0] for pattern in cls._dp_outputs}
        for name, cls in all_estimators()
        if getattr(cls, "_dp_outputs", ())
    }


def test_every_declared_dp_output_is_in_the_api_table():
    assert _table() == _declared()
