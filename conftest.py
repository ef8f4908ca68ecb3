"""Collection rules shared by the test run and the doctests of the package."""

import importlib.util

# sklearn_labeldp.nn needs the [torch] extra; without it its doctests cannot be
# collected (tests/nn skips itself through pytest.importorskip).
collect_ignore_glob = []
if importlib.util.find_spec("torch") is None or importlib.util.find_spec("skorch") is None:
    collect_ignore_glob.append("sklearn_labeldp/nn/*")
