"""Sphinx configuration for sklearn-labeldp.

The build is self-contained: no extension fetches anything from the network
(no intersphinx), the theme is Sphinx's bundled alabaster, and MathJax is only
referenced by the HTML pages, loaded by the reader's browser.
"""

import os
import sys

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
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]
root_doc = "index"
default_role = "literal"
nitpicky = False

# -- autodoc / autosummary -------------------------------------------------------

autosummary_generate = True  # writes doc/generated/ (git-ignored)
autosummary_imported_members = False
autodoc_default_options = {"members": True, "inherited-members": True}
autodoc_member_order = "groupwise"
autodoc_typehints = "none"  # numpydoc sections carry the types
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
}

# -- HTML ----------------------------------------------------------------------

html_theme = "alabaster"
html_title = f"{project} {release}"
html_static_path = []
html_theme_options = {
    "description": "Learning with label differential privacy, the scikit-learn way.",
    "fixed_sidebar": True,
    "page_width": "1100px",
    "sidebar_width": "240px",
    "show_relbars": True,
}
html_sidebars = {
    "**": ["about.html", "navigation.html", "relations.html", "searchbox.html"],
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
