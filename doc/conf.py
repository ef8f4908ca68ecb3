"""Sphinx configuration for sklearn-labeldp.

The build and the pages it writes are self-contained: no extension fetches
anything from the network at build time (no intersphinx), and a page fetches
nothing when a browser shows it.

- Math: ``sphinx.ext.mathjax`` writes the formulas, and ``sphinx-mathjax-offline``
  (a PyPI package of the ``doc`` extra) copies MathJax 3.2.2 with its fonts into
  ``_static/mathjax`` and points the pages at that copy instead of a CDN, so
  ``\\(\\varepsilon\\)`` renders without a network.
- Theme: pydata-sphinx-theme (the ``doc`` extra; scikit-learn's theme), whose
  scripts and icon fonts are bundled. ``_static/custom.css`` widens the page and
  the article column so that code blocks of about 100 characters fit at common
  window widths; a wider block or table scrolls inside its own box.
- sphinx-gallery's computation-time pages are not written: they load DataTables
  and jQuery from CDNs.
"""

import os
import sys

# The gallery's examples fit on small data (a few thousand rows), where OpenMP's
# worker threads cost more than they save; on a busy 2-core machine their
# spinning made HistGradientBoostingRegressor's fits in the Friedman example
# take 120 s instead of 3 s. One thread each for OpenMP (scikit-learn, torch)
# and BLAS, unless the caller's environment says otherwise; set before NumPy,
# scikit-learn or torch is first imported (below and by the examples).
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

# Make the package importable from a source checkout even when not installed.
sys.path.insert(0, os.path.abspath(".."))

import sklearn_labeldp  # noqa: E402

# -- Project -------------------------------------------------------------------

project = "sklearn-labeldp"
author = "The sklearn-labeldp developers"
copyright = "The sklearn-labeldp developers"
release = sklearn_labeldp.__version__
version = ".".join(release.split(".")[:2])

# -- General -------------------------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # Sets mathjax_path to a local copy of MathJax, copied into _static/mathjax
    # when the build finishes (the module's name has hyphens).
    "sphinx-mathjax-offline",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
# sphinx-gallery's computation-time pages load DataTables and jQuery from CDNs;
# they are not written (write_computation_times below), and a copy left by an
# older build is not built either.
exclude_patterns = [
    "_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints",
    "sg_execution_times.rst", "auto_examples/sg_execution_times.rst",
]
root_doc = "index"
default_role = "literal"
nitpicky = False

# -- autodoc / autosummary -------------------------------------------------------

autosummary_generate = True  # writes doc/generated/ (git-ignored)
autosummary_imported_members = False
autodoc_default_options = {"members": True, "inherited-members": True}
autodoc_member_order = "groupwise"
autodoc_typehints = "none"  # numpydoc sections carry the types
# The page's table of contents names a method "fit()", not
# "DPLeastSquaresClassifier.fit()", which would not fit the sidebar.
toc_object_entries_show_parents = "hide"
# __init__ only stores parameters; the class docstring documents them.
autoclass_content = "class"

# -- numpydoc ------------------------------------------------------------------

# Members are documented by autodoc (autodoc_default_options above); numpydoc's
# own member tables would list them a second time.
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
# numpydoc's style validation stays off: checks such as EX01 (an Examples
# section on every method) are stricter than the project's conventions.
# Docstrings that do not render still fail the build as warnings.
numpydoc_validation_checks = set()

# -- sphinx-gallery ------------------------------------------------------------

# Examples run at build time; sphinx-gallery itself selects matplotlib's Agg
# backend. A failing example is a build error (under -W).
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "reset_modules": ("matplotlib",),
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "show_memory": False,
    "reference_url": {},  # no links into remote documentation (offline build)
    "write_computation_times": False,  # see exclude_patterns
}

# -- HTML ----------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"{project} {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    # The navbar stays on one line at a 1280 px window: four links (the
    # developers' guide and the references go under "More") and a search icon
    # rather than the wide search field.
    "navbar_align": "left",
    "header_links_before_dropdown": 4,
    "navbar_persistent": ["search-button"],
    "show_toc_level": 2,
    # The page's table of contents only: no "edit" or "show source" links.
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_show_sourcelink = False

# -- Extension hooks -----------------------------------------------------------


# Libraries whose inherited members are documented by the library itself.
_FOREIGN_PACKAGES = ("numpy", "sklearn", "skorch", "torch")


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Leave out methods a class inherits unchanged from NumPy, scikit-learn, skorch or torch.

    Their docstrings cross-reference the other project's documentation (NumPy's
    ``RandomState`` methods, inherited by ``DerivedRandomState``, link to NumPy
    labels, and torch's are not numpydoc), which this offline build cannot
    render or resolve. The class template names scikit-learn's standard methods instead;
    :class:`~sklearn_labeldp.nn.LabelDPNetClassifier` and the networks refer to
    skorch and torch for theirs.
    """
    module = getattr(obj, "__module__", None) or ""
    if what == "class" and module.split(".")[0] in _FOREIGN_PACKAGES:
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_members)
