"""The skorch side of :class:`~sklearn_labeldp.nn.LabelDPNetClassifier`: the hooks it overrides.

:class:`SkorchHooksMixin` stands before :class:`skorch.NeuralNet` among the
classifier's bases, and its methods reach skorch's through ``super()``. They
let skorch's internals see the resolved device while the ``device``
parameter keeps ``"auto"`` (also when a pickled net is loaded), give
in-memory arrays whole-tensor datasets and batches
(:mod:`sklearn_labeldp.nn._data`), pick the criterion and the prediction
nonlinearity of the target kind the net learns (``target_kind_``), pass the
number of outputs (``n_outputs_``) to the module, and run skorch's training
step under the fit's training mode (:mod:`sklearn_labeldp.nn._training`).
"""

import inspect
from collections.abc import Mapping
from contextlib import contextmanager
from functools import partial

import torch
from skorch.dataset import Dataset, unpack_data
from skorch.utils import is_dataset, to_tensor
from torch import nn
from torch.utils.data import DataLoader

from ._data import ArrayBatches, ArrayDataset, as_tensor, resolve_device, stage
from ._losses import SoftCrossEntropyLoss
from ._training import combine

__all__ = ["SkorchHooksMixin"]


# One criterion per kind of target; all take raw logits.
_LOSSES = {
    "hard": nn.CrossEntropyLoss,  # also accepts the probability rows mixup makes
    "soft": SoftCrossEntropyLoss,
    "bits": nn.BCEWithLogitsLoss,
}


def _accepts_keyword(factory, name):
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is p.VAR_KEYWORD for p in parameters)


class SkorchHooksMixin:
    """skorch's hooks as :class:`~sklearn_labeldp.nn.LabelDPNetClassifier` overrides them.

    A mixin of that class only, before ``NeuralNet`` among its bases: it has
    no parameter or state of its own, and reads the classifier's ``device``,
    ``criterion``, ``module``, ``n_outputs_`` and ``target_kind_``.
    """

    # ---------------------------------------------------------- skorch hooks

    def initialize_criterion(self):
        """Instantiate the loss of the current target kind (or the user's ``criterion``)."""
        criterion = self.criterion
        if criterion is None:
            criterion = _LOSSES[getattr(self, "target_kind_", None) or "hard"]
        kwargs = self.get_params_for("criterion")
        self.criterion_ = self.initialized_instance(criterion, kwargs)
        return self

    def get_params_for(self, prefix):
        """skorch's ``get_params_for`` plus ``n_outputs`` for the module at fit time."""
        params = super().get_params_for(prefix)
        if (
            prefix == "module"
            and "n_outputs" not in params
            and getattr(self, "n_outputs_", None) is not None
            and not isinstance(self.module, nn.Module)
            and _accepts_keyword(self.module, "n_outputs")
        ):
            params["n_outputs"] = self.n_outputs_
        return params

    def _initialize_module(self, reason=None):
        with self._device_context():
            return super()._initialize_module(reason=reason)

    def _initialize_criterion(self, reason=None):
        with self._device_context():
            return super()._initialize_criterion(reason=reason)

    @contextmanager
    def _device_context(self):
        """Let skorch's internals see the resolved device while keeping the parameter."""
        requested = self.__dict__["device"]
        resolved = resolve_device(requested)
        if resolved is requested:
            yield
            return
        self.__dict__["device"] = resolved
        try:
            yield
        finally:
            self.__dict__["device"] = requested

    def get_dataset(self, X, y=None):
        """Whole-tensor dataset for in-memory arrays (skorch's ``dataset`` otherwise)."""
        if is_dataset(X):
            return X
        if self.dataset is not Dataset or self.get_params_for("dataset"):
            return super().get_dataset(X, y)
        tensors = [as_tensor(X, float32=True)] + ([] if y is None else [as_tensor(y)])
        tensors = stage(tensors, resolve_device(self.device))
        return ArrayDataset(*tensors)

    def get_iterator(self, dataset, training=False):
        """Batches of ``dataset``; training batches are shuffled unless told otherwise."""
        prefix = "iterator_train" if training else "iterator_valid"
        iterator = self.iterator_train if training else self.iterator_valid
        kwargs = self.get_params_for(prefix)
        kwargs.setdefault("batch_size", self.batch_size)
        if kwargs["batch_size"] == -1:
            kwargs["batch_size"] = len(dataset)
        if iterator is DataLoader:
            kwargs.setdefault("shuffle", training)
            if isinstance(dataset, ArrayDataset) and set(kwargs) <= {"batch_size", "shuffle"}:
                return ArrayBatches(dataset, **kwargs)
        return iterator(dataset, **kwargs)

    def train_step_single(self, batch, training_mode=None, **fit_params):
        """skorch's training step under the fit's training mode (plain training without one).

        The mode transforms the batch (mixup, FixMatch's weak augmentation)
        before the forward pass and may add terms to the loss (FixMatch's
        unlabeled loss) before the backward pass.
        """
        training = combine() if training_mode is None else training_mode
        if not self._in_training_mode():
            self._set_training(True)
        Xi, yi = training.transform_batch(self, *unpack_data(batch))
        y_pred = self.infer(Xi, **fit_params)
        step = {"y_pred": y_pred}
        loss = self.get_loss(y_pred, yi, X=Xi, training=True)
        loss = training.add_loss(self, loss, Xi, step, **fit_params)
        loss.backward()
        step["loss"] = loss
        return step

    def _in_training_mode(self):
        """Whether every module and criterion, submodules included, is in training mode.

        skorch sets the training mode at every step: ``train()`` walks the
        modules and sets each flag through ``nn.Module.__setattr__``, about
        3% of a small network's step. Reading the flags is cheaper, and the
        mode is set, as skorch would, wherever one of them is off (after the
        previous epoch's validation, or a callback's switch).
        """
        modules = (getattr(self, name + "_", None) for name in self._modules + self._criteria)
        return all(part.training for module in modules if isinstance(module, torch.nn.Module)
                   for part in module.modules())

    def infer(self, x, **fit_params):
        """Forward pass of one batch on the resolved device."""
        x = to_tensor(x, device=resolve_device(self.device))
        if isinstance(x, Mapping):
            return self.module_(**self._merge_x_and_fit_params(x, fit_params))
        return self.module_(x, **fit_params)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        """The criterion of the current target kind on one batch."""
        y_true = to_tensor(y_true, device=resolve_device(self.device))
        return self.criterion_(y_pred, y_true)

    def _get_predict_nonlinearity(self):
        if isinstance(self.predict_nonlinearity, str) and self.predict_nonlinearity == "auto":
            self.check_is_fitted()
            if getattr(self, "target_kind_", None) == "bits":
                return torch.sigmoid
            return partial(torch.softmax, dim=-1)
        return super()._get_predict_nonlinearity()

    # ---------------------------------------------------------- persistence

    def __setstate__(self, state):
        requested = state["device"]
        state["device"] = resolve_device(requested)
        # skorch maps the weights onto the saved device, or onto the CPU with a
        # DeviceWarning (setting ``device`` to the CPU) when that one is absent.
        super().__setstate__(state)
        if "device_" in self.__dict__:
            self.__dict__["device_"] = self.__dict__["device"]
        if isinstance(requested, str) and requested == "auto":
            self.__dict__["device"] = requested

    def load_params(self, *args, **kwargs):
        """skorch's ``load_params`` on the resolved device."""
        with self._device_context():
            return super().load_params(*args, **kwargs)
