"""The package's logger: label-free facts of a fit, for users who ask for them.

``logging.getLogger("sklearn_labeldp")`` receives what was charged and the
settings a fit resolved (``mechanism_params_``), both public parts of the
fitted model. No handler is installed (the library convention): a user who
wants them configures logging, e.g. ``logging.basicConfig(level="INFO")``.
Inside a sealed release logging is disabled, so nothing computed on the true
labels can reach a handler.
"""

import logging

__all__ = ["logger"]

logger = logging.getLogger("sklearn_labeldp")
