"""Collection rules shared by the test run and the doctests of the package."""

import importlib.util

# The user guide's pages run in tests/test_doc_snippets.py; should doc/ be named
# on the command line, what Sphinx and sphinx-gallery generate there is not
# documentation source, and doc/conf.py is Sphinx's configuration, not a module
# to import.
collect_ignore_glob = [
    "doc/_build/*",
    "doc/generated/*",
    "doc/auto_examples/*",
    "doc/sg_execution_times.rst",
    "doc/conf.py",
]

# sklearn_labeldp.nn needs the [torch] extra; without it its doctests cannot be
# collected (tests/nn skips itself through pytest.importorskip).
if importlib.util.find_spec("torch") is None or importlib.util.find_spec("skorch") is None:
    collect_ignore_glob.append("sklearn_labeldp/nn/*")
