"""The package's import graph: no cycle, and no module imports a sibling inside a function.

An import written inside a function hides a cycle from whoever reads the top
of the file (``a`` imports ``b`` at the top, ``b`` imports ``a`` in a
function), and it moves the import's failure from import time to the first
call. Each module of ``sklearn_labeldp`` is parsed with :mod:`ast` (nothing is
imported); every import of a module of the package, at module level or inside
a function, is an edge of the graph. Importing a package runs its
``__init__``, so a package is the node of its ``__init__.py``.

Only an optional extra (the ``[project.optional-dependencies]`` of
``pyproject.toml``: torch, dask, dp-accounting, ...) may be imported inside a
function, so that the core works without it; so may a module of the package
that itself needs an extra the importing module does not need, which is the
same thing one step removed.
"""

import ast
from pathlib import Path

PACKAGE = "sklearn_labeldp"
PACKAGE_DIR = Path(__file__).resolve().parents[1] / PACKAGE

# Top-level names of the optional extras' distributions (pyproject.toml).
OPTIONAL_EXTRAS = frozenset({
    "dask", "distributed", "dp_accounting", "matplotlib", "opacus", "randomgen", "skorch",
    "torch", "torchvision", "tqdm",
})


def _modules():
    """``{module name: (path, is_package)}`` for every ``.py`` file of the package."""
    modules = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


MODULES = _modules()


class _Imports(ast.NodeVisitor):
    """Every import statement of a module, with whether it runs inside a function."""

    def __init__(self):
        self.depth = 0
        self.found = []  # (lineno, in_function, absolute module or None, level, names)

    def _function(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node):
        for alias in node.names:
            self.found.append((node.lineno, self.depth > 0, alias.name, 0, ()))

    def visit_ImportFrom(self, node):
        names = tuple(alias.name for alias in node.names)
        self.found.append((node.lineno, self.depth > 0, node.module, node.level, names))


def _targets(module, is_package, name, level, names):
    """The modules an import statement names: the package's own, or top-level names."""
    if level:
        base = module.split(".")
        base = base if is_package else base[:-1]
        base = base[: len(base) - (level - 1)]
        name = ".".join(base + ([name] if name else []))
    if name.split(".")[0] != PACKAGE:
        return [name.split(".")[0]]
    # `from .pkg import sub` imports the submodule sub when there is one.
    subs = [f"{name}.{item}" for item in names if f"{name}.{item}" in MODULES]
    if subs and len(subs) == len(names):
        return subs
    return [name, *subs]


def _import_edges():
    """``[(importer, imported, lineno, in_function)]`` over the whole package."""
    edges = []
    for module, (path, is_package) in MODULES.items():
        visitor = _Imports()
        visitor.visit(ast.parse(path.read_text(), str(path)))
        for lineno, in_function, name, level, names in visitor.found:
            for target in _targets(module, is_package, name, level, names):
                edges.append((module, target, lineno, in_function))
    return edges


EDGES = _import_edges()


def _extras_needed():
    """Each module's optional extras, imported at module level by it or its module-level
    imports of the package."""
    direct = {module: set() for module in MODULES}
    inner = {module: set() for module in MODULES}
    for importer, target, _, in_function in EDGES:
        if in_function:
            continue
        if target in OPTIONAL_EXTRAS:
            direct[importer].add(target)
        elif target in MODULES:
            inner[importer].add(target)
    needed = {}

    def visit(module, seen):
        if module in needed:
            return needed[module]
        extras = set(direct[module])
        for other in inner[module] - seen:
            extras |= visit(other, seen | {module})
        needed[module] = extras
        return extras

    for module in MODULES:
        visit(module, frozenset())
    return needed


def _cycles(graph):
    """The strongly connected components of more than one module (or with a self-loop)."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def connect(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.add(other)
                if other == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return components


def test_the_parser_sees_the_package():
    # The checks below are vacuous if the walk finds nothing: the package, a subpackage
    # and both kinds of edge must be there.
    assert f"{PACKAGE}.linear_model._erm" in MODULES
    assert f"{PACKAGE}.linear_model" in MODULES
    assert any(not in_function and target.startswith(f"{PACKAGE}.")
               for _, target, _, in_function in EDGES)
    assert any(in_function and target in OPTIONAL_EXTRAS for _, target, _, in_function in EDGES)


def test_no_import_cycle_counting_function_level_imports():
    # Fails at 1a26cae: linear_model._dask <-> _least_squares <-> _second_order, through
    # the function-level imports of the numpy kernels that the dask path maps over blocks.
    graph = {}
    for importer, target, _, _ in EDGES:
        if target in MODULES and target != importer:
            graph.setdefault(importer, set()).add(target)
    cycles = _cycles(graph)
    assert not cycles, "import cycles (function-level imports included):\n" + "\n".join(
        " <-> ".join(cycle) for cycle in cycles
    )


def test_no_function_level_import_of_a_sibling_module():
    # Fails at 1a26cae on the four imports of that circle, on _second_order's of
    # ..utils, and on nn._dp_sgd's of nn._callbacks.
    needed = _extras_needed()
    hidden = [
        f"{importer} (line {lineno}) imports {target} inside a function"
        for importer, target, lineno, in_function in EDGES
        if in_function and target in MODULES
        and not (needed[target] - needed[importer])
    ]
    assert not hidden, (
        "function-level imports of the package's own modules (import them at the top; "
        "only optional extras are imported lazily):\n" + "\n".join(hidden)
    )


def test_the_checks_catch_a_hidden_cycle():
    # The detector on the shape the linear models had: _dask imported
    # _least_squares inside a function, and _least_squares imported _dask inside one.
    graph = {"a._dask": {"a._least_squares"}, "a._least_squares": {"a._dask", "a._gram"}}
    assert _cycles(graph) == [["a._dask", "a._least_squares"]]
    assert _cycles({"a": {"b"}, "b": {"c"}}) == []
    source = "import numpy\n\ndef f():\n    from ._dask import x\n    import dask\n"
    visitor = _Imports()
    visitor.visit(ast.parse(source))
    assert [(found[1], found[2], found[3]) for found in visitor.found] == [
        (False, "numpy", 0), (True, "_dask", 1), (True, "dask", 0)
    ]
    assert _targets(f"{PACKAGE}.linear_model._dask", False, "_statistics", 1, ("x",)) == [
        f"{PACKAGE}.linear_model._statistics"
    ]
    assert _targets(f"{PACKAGE}.linear_model", True, None, 1, ("_erm",)) == [
        f"{PACKAGE}.linear_model._erm"
    ]
