"""The package's logger: label-free facts of a fit, for users who ask for them.

``logging.getLogger("sklearn_labeldp")`` receives what was charged and the
settings a fit resolved (``mechanism_params_``), both public parts of the
fitted model. No handler is installed (the library convention): a user who
wants them configures logging, e.g. ``logging.basicConfig(level="INFO")``.
Inside a sealed release logging is disabled, so nothing computed on the true
labels can reach a handler.
"""

import logging
import os
import sys

__all__ = ["logger", "user_stacklevel"]

logger = logging.getLogger("sklearn_labeldp")


def user_stacklevel():
    """The ``stacklevel`` that makes a warning point at the user's call, not at the library.

    Counted from the function that calls :func:`warnings.warn`: the first
    frame outside this package and outside scikit-learn's ``fit`` wrapper
    (``sklearn/base.py``), however deep the fit's hooks are nested.

    Returns
    -------
    int
    """
    frame, level = sys._getframe(1), 1
    while frame is not None and (
        frame.f_globals.get("__name__", "").startswith("sklearn_labeldp.")
        or frame.f_code.co_filename.endswith(os.path.join("sklearn", "base.py"))
    ):
        frame, level = frame.f_back, level + 1
    return level
