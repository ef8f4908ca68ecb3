"""Every Python snippet of the README and the user guide runs as written.

Each page's snippets run in order in one namespace, as a reader pasting them
into one session would: the README's ```` ```python ```` blocks, and in
``doc/index.rst`` and ``doc/user_guide/*.rst`` every ``.. code-block:: python``
or ``pycon`` block and every ``::`` literal block holding ``>>>`` prompts.
Blocks with ``>>>`` prompts run as doctests in that namespace, so the outputs
they show are checked. One test per page, so a failure names the page and the
line of the block.

A block that cannot run in the test environment (a GPU, a download) is skipped
only by a visible comment directly before it in the page's source, with the
reason: ``.. snippet-skip: reason`` in reStructuredText, ``<!-- snippet-skip:
reason -->`` in Markdown. :data:`ALLOWED_SKIPS` lists every such comment, so a
new skip fails :func:`test_skips_are_listed` until it is reviewed and listed.

The snippets run in a fresh working directory with a fresh default ledger and
with downloads disabled. UCI Adult is read from ``../shared/data/adult`` (or
the folder already in ``SKLEARN_LABELDP_ADULT``), Fashion-MNIST from its system
package's folder; where one is absent, a small random stand-in with the same
file layout takes its place, so the pages' calls and attribute names are still
exercised (only the numbers are meaningless).
"""

import doctest
import gzip
import importlib.util
import os
import re
import struct
import sys
import textwrap
import urllib.request
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ["README.md", "doc/index.rst", *sorted(
    p.relative_to(ROOT).as_posix() for p in (ROOT / "doc" / "user_guide").glob("*.rst"))]

# (page, reason) of every snippet-skip comment in the pages; a new one must be listed here.
ALLOWED_SKIPS: set = set()

# Pages that start a distributed.LocalCluster of worker processes: they run
# with the other such tests (`make test-cluster`), not in `make test`.
NEEDS_CLUSTER = {"doc/user_guide/cluster.rst"}

ADULT_DIR = ROOT.parent / "shared" / "data" / "adult"
FASHION_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
DOCTEST_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass
class Snippet:
    page: str
    line: int        # line of the directive or fence, 1-based
    first_line: int  # line of the first line of code, 1-based
    code: str
    skip: str | None  # the reason of a snippet-skip comment, or None


_RST_DIRECTIVE = re.compile(r"^(\s*)\.\. code-block::\s*(\S+)\s*$")
_RST_SKIP = re.compile(r"^\s*\.\. snippet-skip:\s*(.+?)\s*$")
_MD_FENCE = re.compile(r"^```\s*(\S*)\s*$")
_MD_SKIP = re.compile(r"^\s*<!--\s*snippet-skip:\s*(.+?)\s*-->\s*$")


def _indent(line):
    return len(line) - len(line.lstrip())


def _skip_reason(lines, index, pattern):
    """The reason of a skip comment on the last non-blank line before ``lines[index]``."""
    for line in reversed(lines[:index]):
        if line.strip():
            match = pattern.match(line)
            return match.group(1) if match else None
    return None


def rst_snippets(page):
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    snippets, i = [], 0
    while i < len(lines):
        directive = _RST_DIRECTIVE.match(lines[i])
        literal = not directive and lines[i].rstrip().endswith("::") and not (
            lines[i].lstrip().startswith(".. "))
        if not (directive or literal):
            i += 1
            continue
        indent = _indent(lines[i])
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > indent):
            j += 1
        body = list(range(i + 1, j))
        if directive:  # drop the directive's options (":caption: ...")
            while body and lines[body[0]].strip().startswith(":"):
                body.pop(0)
        while body and not lines[body[0]].strip():
            body.pop(0)
        while body and not lines[body[-1]].strip():
            body.pop()
        code = textwrap.dedent("\n".join(lines[k] for k in body))
        language = directive.group(2) if directive else None
        if body and (language in ("python", "pycon") or (literal and ">>>" in code)):
            snippets.append(Snippet(page, i + 1, body[0] + 1, code,
                                    _skip_reason(lines, i, _RST_SKIP)))
        i = j
    return snippets


def md_snippets(page):
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    snippets, i = [], 0
    while i < len(lines):
        fence = _MD_FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        if fence.group(1) in ("python", "py", "pycon"):
            snippets.append(Snippet(page, i + 1, i + 2, "\n".join(lines[i + 1:j]),
                                    _skip_reason(lines, i, _MD_SKIP)))
        i = j + 1
    return snippets


def snippets_of(page):
    return md_snippets(page) if page.endswith(".md") else rst_snippets(page)


def run_snippet(snippet, namespace):
    """Run one block in ``namespace``; raise AssertionError naming the page and line."""
    where = f"{snippet.page}, block at line {snippet.line}"
    filename = str(ROOT / snippet.page)
    if ">>>" in snippet.code:
        test = doctest.DocTestParser().get_doctest(
            snippet.code, namespace, where, filename, snippet.first_line - 1)
        report = []
        runner = doctest.DocTestRunner(optionflags=DOCTEST_FLAGS)
        runner.run(test, out=report.append, clear_globs=False)
        namespace.update(test.globs)
        if runner.failures:
            raise AssertionError(f"{where} failed:\n" + "".join(report))
        return
    # Leading newlines keep the page's line numbers in tracebacks.
    code = compile("\n" * (snippet.first_line - 1) + snippet.code, filename, "exec")
    try:
        exec(code, namespace)
    except Exception as exc:
        raise AssertionError(f"{where} raised {type(exc).__name__}: {exc}") from exc


def _no_download(*args, **kwargs):
    raise RuntimeError("the documentation's snippets must not download anything")


def _idx(array):
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.tobytes()


def _fake_fashion_mnist(folder, n_train=600, n_test=200):
    """Random images and labels in Fashion-MNIST's four (gzipped) IDX files."""
    rng = np.random.default_rng(0)
    folder.mkdir()
    for split, n in (("train", n_train), ("test", n_test)):
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = np.arange(n, dtype=np.uint8) % 10
        for name, array in zip(FASHION_MNIST_FILES[split], (images, labels), strict=True):
            (folder / (name + ".gz")).write_bytes(gzip.compress(_idx(array), compresslevel=1))
    return folder


ADULT_COLUMNS = {
    "age": range(17, 91), "workclass": ["Private", "State-gov", "?"], "fnlwgt": range(10**4, 10**6),
    "education": ["Bachelors", "HS-grad", "Masters"], "education-num": range(1, 17),
    "marital-status": ["Never-married", "Divorced"], "occupation": ["Sales", "Tech-support", "?"],
    "relationship": ["Husband", "Wife", "Own-child"], "race": ["White", "Black"],
    "sex": ["Male", "Female"], "capital-gain": range(0, 5000), "capital-loss": range(0, 500),
    "hours-per-week": range(1, 100), "native-country": ["United-States", "Mexico", "?"],
    "class": ["<=50K", ">50K"],
}


def _fake_adult(folder, n_train=600, n_test=200):
    """Random rows in UCI Adult's two CSV files (its header, value kinds and ``"?"``)."""
    rng = np.random.default_rng(0)
    folder.mkdir()
    for name, n in (("adult.data.csv", n_train), ("adult.test.csv", n_test)):
        columns = [[str(v) for v in rng.choice(list(values), n)]
                   for values in ADULT_COLUMNS.values()]
        rows = [",".join(ADULT_COLUMNS), *(",".join(row) for row in zip(*columns, strict=True))]
        (folder / name).write_text("\n".join(rows) + "\n")
    return folder


@pytest.fixture
def page_environment(tmp_path, monkeypatch):
    """A fresh working directory and default ledger, no downloads, and the data sets."""
    from sklearn_labeldp.accounting import DEFAULT_LEDGER_ENV
    from sklearn_labeldp.datasets import _fashion_mnist

    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    monkeypatch.setenv(DEFAULT_LEDGER_ENV, str(tmp_path / "default-ledger.sqlite"))
    monkeypatch.setattr(urllib.request, "urlopen", _no_download)
    import sklearn.datasets
    monkeypatch.setattr(sklearn.datasets, "fetch_openml", _no_download)
    for name, module in list(sys.modules.items()):
        if name.startswith(("sklearn.datasets", "sklearn_labeldp")):
            for attribute in ("fetch_openml", "urlopen"):
                if hasattr(module, attribute):
                    monkeypatch.setattr(module, attribute, _no_download)

    home = Path(_fashion_mnist.DEFAULT_DATA_HOME)
    if not all((home / name).is_file() or (home / (name + ".gz")).is_file()
               for names in FASHION_MNIST_FILES.values() for name in names):
        stand_in = _fake_fashion_mnist(tmp_path / "fashion-mnist")
        monkeypatch.setattr(_fashion_mnist, "DEFAULT_DATA_HOME", str(stand_in))
    adult = os.environ.get("SKLEARN_LABELDP_ADULT") or (
        str(ADULT_DIR) if ADULT_DIR.is_dir() else str(_fake_adult(tmp_path / "adult")))
    monkeypatch.setenv("SKLEARN_LABELDP_ADULT", adult)


@pytest.fixture
def close_figures():
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


# The pages that hold Python snippets (the others, e.g. a toctree, hold none).
PAGES = [page for page in SOURCES if snippets_of(page)]


def _param(page):
    if page in NEEDS_CLUSTER:
        return pytest.param(page, marks=pytest.mark.dask_cluster)
    return page


@pytest.mark.parametrize("page", [_param(page) for page in PAGES])
def test_page_snippets_run_in_order(page, page_environment, close_figures):
    snippets = snippets_of(page)
    if importlib.util.find_spec("matplotlib") is not None:
        import matplotlib

        matplotlib.use("Agg")
    run_page(snippets)


def run_page(snippets):
    """Run a page's snippets in order in one namespace, as one pasted session."""
    namespace = {"__name__": "__main__"}
    # One BLAS thread: tiny problems gain nothing from more, and on a busy
    # machine (pytest-xdist workers on 2 cores) extra threads make them crawl.
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        # A renamed key or a deprecated parameter in a snippet fails the page:
        # deprecation warnings attributed to the snippets' code (run as
        # __main__) and the library's own FutureWarnings become errors.
        for category in (FutureWarning, DeprecationWarning, PendingDeprecationWarning):
            warnings.filterwarnings("error", category=category, module="__main__")
        warnings.filterwarnings("error", category=FutureWarning, module="sklearn_labeldp")
        for snippet in snippets:
            if snippet.skip is None:
                run_snippet(snippet, namespace)
    return namespace


def test_skips_are_listed():
    found = {(s.page, s.skip) for page in PAGES for s in snippets_of(page) if s.skip}
    assert found == ALLOWED_SKIPS, (
        "snippet-skip comments changed; review them and update ALLOWED_SKIPS: "
        f"new {sorted(found - ALLOWED_SKIPS)}, gone {sorted(ALLOWED_SKIPS - found)}")


def test_collector_finds_the_blocks(tmp_path, monkeypatch):
    # The collector itself: options dropped, nesting respected, skips read,
    # text blocks and plain literal blocks left out.
    page = tmp_path / "page.rst"
    page.write_text(textwrap.dedent("""\
        Title
        =====

        .. code-block:: python
           :caption: one

           a = 1
           if a:
               b = 2

        .. code-block:: text

           not python

        A literal block::

           plain text

        Prompts::

           >>> a + b
           3

        .. snippet-skip: needs a GPU

        .. code-block:: python

           raise SystemExit
        """), encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = rst_snippets("page.rst")
    assert [(s.line, s.first_line, s.skip) for s in found] == [
        (4, 7, None), (19, 21, None), (26, 28, "needs a GPU")]
    assert found[0].code == "a = 1\nif a:\n    b = 2"
    namespace = {}
    for snippet in found[:2]:
        run_snippet(snippet, namespace)
    with pytest.raises(AssertionError, match=r"page.rst, block at line 19"):
        run_snippet(Snippet("page.rst", 19, 21, ">>> a\n2", None), namespace)
    with pytest.raises(AssertionError, match=r"page.rst, block at line 4 raised NameError"):
        run_snippet(Snippet("page.rst", 4, 7, "undefined_name", None), {})
    # A renamed key, still read with a FutureWarning, fails the page; a skipped block is not run.
    renamed = ("from sklearn_labeldp.utils._mechanism_params import MechanismParams\n"
               "MechanismParams(release_epsilon=1.0)['stage_epsilon']")
    with pytest.raises(AssertionError, match=r"raised FutureWarning: .*stage_epsilon"):
        run_page([Snippet("page.rst", 4, 7, renamed, None)])
    assert run_page([*found[:2], found[2]])["b"] == 2


def test_adult_stand_in_reads_like_adult(tmp_path):
    from sklearn_labeldp.datasets import fetch_adult, load_adult

    folder = _fake_adult(tmp_path / "adult")
    X, y = fetch_adult(folder, return_X_y=True)
    assert X.shape == (800, 14) and set(y) == {"<=50K", ">50K"}
    assert X["workclass"].isna().any()  # "?" is a missing value, as in UCI's files
    assert load_adult(folder).X_train.shape[0] == 600


def test_snippets_cannot_download(page_environment, monkeypatch, tmp_path):
    # Without a local copy, fetch_adult would fetch OpenML's: the pages' environment refuses.
    from sklearn_labeldp.datasets import fetch_adult

    monkeypatch.delenv("SKLEARN_LABELDP_ADULT", raising=False)
    with pytest.raises(RuntimeError, match="must not download"):
        fetch_adult(data_home=tmp_path)
    with pytest.raises(RuntimeError, match="must not download"):
        urllib.request.urlopen("https://example.org")
