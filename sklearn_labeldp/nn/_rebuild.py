"""Rebuild a trained network from its DP output alone: release by allowlist.

A network trained on true labels carries much more than its weights: Opacus
leaves the last step's un-noised sum of clipped per-example gradients on every
parameter (``summed_grad``, which survives pickling) and the noisy gradient in
``.grad``; skorch's scoring callbacks keep the best epoch loss on the true
labels (``best_score_``); the optimizer may keep state; the history keeps every
batch's loss and size. Deleting these one by one is a denylist that the next
library version defeats. Instead the network handed back is a new object built
from public configuration, into which only the values of the trained module's
parameters and buffers are copied: whatever else the trained object holds is
unreachable from it.
"""

import torch
from skorch.history import History

from ._net_access import initialize_untrained

__all__ = ["rebuild_network"]


def _values(module):
    parameters = dict(module.named_parameters())
    buffers = dict(module.named_buffers())
    return parameters, buffers


def _copy_values(source, target):
    """Copy the parameter and buffer values of ``source`` into the fresh ``target``.

    ``copy_`` under ``no_grad`` writes values only: no tensor of ``source``
    (nor its ``.grad``, attributes or autograd history) is referenced by
    ``target``, and each target tensor keeps the ``requires_grad`` it was
    constructed with.
    """
    source_parameters, source_buffers = _values(source)
    target_parameters, target_buffers = _values(target)
    if source_parameters.keys() != target_parameters.keys() or (
        source_buffers.keys() != target_buffers.keys()
    ):
        # A module whose structure differs between two instances of the same
        # configuration: its trained values have no fresh home.
        raise RuntimeError(
            "the trained module and a fresh instance of it have different parameters or buffers."
        )
    with torch.no_grad():
        for name, tensor in target_parameters.items():
            tensor.copy_(source_parameters[name].detach())
        for name, tensor in target_buffers.items():
            tensor.copy_(source_buffers[name].detach())


def rebuild_network(shell, trained, X, n_classes):
    """A fresh, fitted network holding only the trained module's parameter and buffer values.

    Parameters
    ----------
    shell : LabelDPNetClassifier
        An unfitted network with the configuration of the trained one (a clone
        made before training, whose callbacks never ran); it becomes the
        returned network.
    trained : LabelDPNetClassifier
        The network trained on the private labels. Only the values of its
        module's parameters and buffers are read.
    X : ndarray or tensor of shape (n_samples, ...)
        The public training inputs: they set ``n_features_in_`` and two rows
        materialise lazy layers (evaluation mode, no gradient).
    n_classes : int
        Number of outputs; ``classes_`` becomes ``arange(n_classes)``.

    Returns
    -------
    LabelDPNetClassifier
        ``shell``, initialised the ordinary way (``verbose=0``): a fresh module
        with the trained values, a fresh unstepped optimizer and criterion,
        freshly initialised callbacks, and a history of ``max_epochs`` rows that
        hold only their epoch number (the planned, public number of epochs).
    """
    shell.set_params(verbose=0)
    # The initial weights are overwritten below; the forward pass on two public
    # rows materialises lazy layers so that every trained value has a home.
    initialize_untrained(shell, X, n_classes)
    _copy_values(trained.module_, shell.module_)
    history = History()
    for epoch in range(1, shell.max_epochs + 1):
        history.new_epoch()
        history.record("epoch", epoch)
    shell.history_ = history
    return shell
