"""What the rest of the package calls of a network besides its public methods.

Functions of a :class:`~sklearn_labeldp.nn.LabelDPNetClassifier` that reach
its label-free checks and its one training loop: DP-SGD
(:mod:`sklearn_labeldp.nn._dp_sgd`) checks a network's parameters and trains
it on label codes under its own training mode, and
:mod:`sklearn_labeldp.nn._rebuild` makes a fitted network without training
to copy trained values into.
"""

import numpy as np

from ._data import resolve_device, seeded

__all__ = ["check_params", "fit_label_codes", "initialize_untrained"]


def check_params(net):
    """Check ``net``'s parameters and device, label-free, as every ``fit*`` does first.

    Raises ``ValueError`` naming the parameter and what it allows.
    """
    net._check_params()


def fit_label_codes(net, X, codes, n_classes, training):
    """Train ``net`` on label codes ``0..n_classes-1`` under the training mode ``training``.

    Every class is an output, whether or not it occurs in ``codes``. Used by
    :class:`~sklearn_labeldp.nn.DPSGDClassifier` with its
    :class:`~sklearn_labeldp.nn._dp_sgd.DPSGDTraining`; the network's own
    mixup, if any, is combined with it (and refused by DP-SGD).

    Returns
    -------
    net : LabelDPNetClassifier
        Fitted, with ``classes_ = arange(n_classes)`` and ``target_kind_ = "hard"``.
    """
    net._check_params()
    X = net._validate_X(X, reset=True)
    codes = np.asarray(codes, dtype=np.int64)
    return net._fit(X, codes, "hard", np.arange(n_classes), net._training(training))


def initialize_untrained(net, X, n_classes):
    """Make ``net`` a fitted classifier of ``n_classes`` hard outputs without any training.

    The parameters are checked, ``X`` (public inputs) sets ``n_features_in_``,
    the fitted attributes are those of a fit on label codes, and the module is
    initialised under a fixed seed in a forked RNG (the caller's global torch
    state is untouched), then run in evaluation mode on two rows of ``X``,
    which materialises lazy layers. Used to rebuild a network around trained
    values (:func:`~sklearn_labeldp.nn._rebuild.rebuild_network`).

    Returns
    -------
    net : LabelDPNetClassifier
    """
    net._check_params()
    X = net._validate_X(X, reset=True)
    device = resolve_device(net.device)
    net.classes_ = np.arange(n_classes)
    net.n_outputs_ = n_classes
    net.target_kind_ = "hard"
    net.device_ = device
    with net._device_context(), seeded(0, device):
        net.initialize()
        net._check_forward(X, "hard")
    return net
