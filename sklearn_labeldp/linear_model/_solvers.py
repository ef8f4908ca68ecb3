"""The private ERM solvers, registered by name in :data:`SOLVERS`.

Each solver is a small object with

- ``mechanism``: its name in the fitted ``privacy_spend_``;
- ``deltas``: the ``delta`` it accepts: ``"positive"`` (Gaussian noise,
  (epsilon, delta)-DP with ``delta`` in (0, 1)) or ``"any"`` (pure
  epsilon-DP at ``delta = 0``, Gaussian noise above: objective and output
  perturbation);
- ``reports_n_iter``: whether its step count is a public parameter, reported
  as ``n_iter_`` (an optimiser's iteration count depends on the labels and is
  not);
- ``calibrate(setting)``: the public mechanism parameters (a dict, the fitted
  ``mechanism_params_``), from an :class:`ERMSetting` and nothing else;
- ``privacy_spend(setting, params)``: the :class:`PrivacySpend` the fit
  charges, from the same public information: its budget is the label-change
  guarantee (the ledger's relation) under either ``privacy``, and under
  ``privacy="full"`` its params add ``example_epsilon`` and ``example_delta``,
  the guarantee for whole examples (``example_guarantee(setting, params)``);
- ``train(codes, *, Z, setting, params, random_state)``: the private training,
  label codes first, called only through ``PrivateLabels.release``; returns
  the coefficients of every binary problem on the mapped features ``Z``;
- ``failure(estimator, setting)``: the fixed text of the
  :class:`~sklearn_labeldp.exceptions.ReleaseError` the release raises when
  ``train`` fails. It names public parameters only: the exception ``train``
  raised (e.g. a :class:`~sklearn_labeldp.exceptions.ConvergenceError`) is
  dropped by the release's seal, since its occurrence and text depend on the
  labels.

The public parameters of every solver are calibrated in
:mod:`~sklearn_labeldp.linear_model._calibration`. Solvers: objective and
output perturbation (Chaudhuri, Monteleoni and Sarwate 2011) through
:func:`~sklearn_labeldp.linear_model._perturbed_erm.perturbed_erm`, DP-Newton
and DP-FC (Mehta, Krichene,
Thakurta, Kurakin and Cutkosky 2023) through
:func:`~sklearn_labeldp.linear_model._second_order.noisy_second_order_logistic`,
DP-SGD and DP-Adam (Abadi et al. 2016; Mehta et al. 2023, Alg. 1) through
:func:`~sklearn_labeldp.linear_model._first_order.noisy_first_order_logistic`,
and randomized response on the labels (Warner 1965) with the debiased loss
of Natarajan et al. (2013) through
:func:`~sklearn_labeldp.linear_model._randomized_labels.randomized_response_erm`.
"""

from dataclasses import dataclass

from ..accounting import PrivacySpend, gaussian_epsilon, subsampled_gaussian_epsilon
from ._calibration import first_order_params, second_order_params
from ._first_order import noisy_first_order_logistic
from ._perturbed_erm import (
    gaussian_perturbation_params,
    perturbation_example_epsilon,
    perturbation_params,
    perturbed_erm,
)
from ._randomized_labels import randomized_response_erm, randomized_response_params
from ._second_order import noisy_second_order_logistic


@dataclass(frozen=True)
class ERMSetting:
    """The public description of one private ERM fit: everything a solver reads but labels.

    Attributes
    ----------
    epsilon, delta : float
        The fit's budget, for a label change (also under ``privacy="full"``).
    privacy : {"label", "full"}
    loss : LogisticLoss or HuberHingeLoss
    n_samples, n_classes : int
    regularization : float
        ``Lambda`` on the mapped features.
    tol : float
        Gradient-norm tolerance of the exact minimiser (objective/output).
    max_iter : int
        Iterations allowed to the exact minimiser (objective/output).
    n_noisy_steps : int or None
        Noisy steps of DP-Newton, DP-FC, DP-SGD and DP-Adam; None for a loss
        without them.
    batch_size : int or None
        Expected Poisson batch size of DP-SGD and DP-Adam; None: full batch.
    learning_rate : float or None
        Of DP-SGD and DP-Adam; None: the optimiser's default.
    max_grad_norm : float or None
        Per-example clipping norm of DP-SGD and DP-Adam under full DP; None:
        the a-priori bound.
    """

    epsilon: float
    delta: float
    privacy: str
    loss: object
    n_samples: int
    n_classes: int
    regularization: float
    tol: float
    max_iter: int
    n_noisy_steps: int = None
    batch_size: int = None
    learning_rate: float = None
    max_grad_norm: float = None


def _example_params(example):
    """The spend's record of the example-level guarantee, if any."""
    if example is None:
        return {}
    return {"example_epsilon": example[0], "example_delta": example[1]}


class _Solver:
    """A leaf spend at the fit's ``(epsilon, delta)``, the label-change guarantee.

    Every solver is calibrated so that a label change, the ledger's relation,
    costs at most ``(epsilon, delta)``, under ``privacy="full"`` too. There the
    leaf's params also record ``example_epsilon`` and ``example_delta``, the
    guarantee for whole examples (:meth:`example_guarantee`).
    """

    def example_guarantee(self, setting, params):
        """``(epsilon, delta)`` for whole examples under ``privacy="full"``; ``None`` otherwise."""
        return None

    def failure(self, estimator, setting):
        """The fixed, label-free message of the error raised when :meth:`train` fails."""
        return (
            f"{estimator}(solver={self.kind!r}): the private training failed after the "
            "budget was charged (e.g. a numerical error), so no model is returned and the "
            "budget stays spent. Its details are withheld because they may depend on the "
            "labels."
        )

    def privacy_spend(self, setting, params):
        example = self.example_guarantee(setting, params)
        return PrivacySpend.leaf(
            self.mechanism, setting.epsilon, setting.delta, privacy=setting.privacy,
            description=_description(params), **params, **_example_params(example),
        )


def _description(params):
    """The record's description: a full batch's Gaussian or a minibatch run's pair, if any."""
    if "gaussian_mu" in params:
        return ("gaussian", params["gaussian_mu"])
    return params.get("dominating_pair")


def _gaussian_example_guarantee(setting, params):
    """The add/remove Gaussian ``example_gaussian_mu`` at the fit's ``delta`` (exact profile)."""
    if setting.privacy != "full":
        return None
    return gaussian_epsilon(params["example_gaussian_mu"], setting.delta), setting.delta


class _Perturbation(_Solver):
    """Objective or output perturbation, needs the exact minimiser.

    Pure epsilon-DP; with ``delta > 0`` Gaussian noise, one joint release
    described by ``("gaussian", mu)`` (:func:`gaussian_perturbation_params`).
    """

    reports_n_iter = False

    def __init__(self, kind, deltas):
        self.kind = kind
        self.deltas = deltas
        self.mechanism = f"ERM {kind} perturbation"

    def example_guarantee(self, setting, params):
        # Calibrated for a label change; the same noise's guarantee for substituting a
        # whole example (Chaudhuri et al. 2011) is reported beside it.
        if params.get("noise") == "gaussian":
            example = _gaussian_example_guarantee(setting, params)
            jacobian = params.get("example_jacobian_epsilon", 0.0)
            return None if example is None else (example[0] + jacobian, example[1])
        if setting.privacy != "full":
            return None
        return perturbation_example_epsilon(self.kind, params, setting.n_samples), 0.0

    def failure(self, estimator, setting):
        # The optimiser's final gradient norm identified a missing label exactly
        # (knowing all the others, the attacker computes it for each candidate
        # value): only the public tol and max_iter are named.
        return (
            f"{estimator}(solver={self.kind!r}): objective and output perturbation are "
            "private only for the exact minimiser, and the optimiser did not reach it "
            f"(gradient norm <= tol={setting.tol:g}) within max_iter={setting.max_iter} "
            "iterations, so no model is returned and the budget stays spent. Raise max_iter "
            "or tol, or lower C. The optimiser's details (its final gradient norm, its "
            "iterations) are withheld because they depend on the labels."
        )

    def calibrate(self, setting):
        if setting.delta > 0:
            return gaussian_perturbation_params(
                self.kind, epsilon=setting.epsilon, delta=setting.delta,
                n_samples=setting.n_samples, n_classes=setting.n_classes,
                reg=setting.regularization, loss=setting.loss, privacy=setting.privacy,
            )
        return perturbation_params(
            self.kind, epsilon=setting.epsilon, n_samples=setting.n_samples,
            n_classes=setting.n_classes, reg=setting.regularization, loss=setting.loss,
            privacy=setting.privacy,
        )

    def train(self, codes, *, Z, setting, params, random_state):
        return perturbed_erm(
            codes, Z=Z, n_classes=setting.n_classes, loss=setting.loss, solver=self.kind,
            params=params, tol=setting.tol, max_iter=setting.max_iter,
            random_state=random_state,
        )


class _SecondOrder(_Solver):
    """DP-Newton or DP-FC (logistic loss only): exact-profile Gaussian noise, public step count."""

    deltas = "positive"
    reports_n_iter = True

    def __init__(self, kind, mechanism):
        self.kind = kind
        self.mechanism = mechanism

    def example_guarantee(self, setting, params):
        return _gaussian_example_guarantee(setting, params)

    def calibrate(self, setting):
        return second_order_params(
            self.kind, epsilon=setting.epsilon, delta=setting.delta,
            n_samples=setting.n_samples, n_classes=setting.n_classes,
            reg=setting.regularization, privacy=setting.privacy,
            n_noisy_steps=setting.n_noisy_steps,
        )

    def train(self, codes, *, Z, setting, params, random_state):
        return noisy_second_order_logistic(
            codes, Z=Z, n_classes=setting.n_classes, solver=self.kind,
            n_noisy_steps=params["n_noisy_steps"], reg=params["regularization"],
            noise_stds=params["noise_scales"], random_state=random_state,
        )


class _FirstOrder(_Solver):
    """DP-SGD or DP-Adam (logistic loss only): Gaussian noise, a public step count.

    Full batch: a Gaussian leaf (described by ``("gaussian", mu)``, label change,
    exact profile) at the fit's ``(epsilon, delta)``. Poisson minibatches (full
    DP): the leaf records the label-change epsilon computed directly
    (``params["label_epsilon"]``, at most the fit's epsilon, at its ``delta``)
    described by the dominating pair that gave it (``params["dominating_pair"]``):
    ``("subsampled_gaussian_label", (std / B, q, T))`` (the replace-one pair of
    each example's norm bound ``B``) or, with two classes,
    ``("subsampled_gaussian", (std / D, q, T))`` (the add/remove pair of the
    label change's bound ``D``, which dominates the label change there; see
    :func:`~sklearn_labeldp.accounting._label_change.bounded_label_change_epsilon`).
    Either is a dominating pair of the label change, so the ledger's exact
    composition (and the Renyi-DP one of a ``"subsampled_gaussian"`` entry) is
    valid for its relation. The add/remove guarantee of the run (clipping norm
    ``C``, noise multiplier ``s``) at the fit's ``delta`` is reported beside
    it (privacy loss distributions).
    """

    deltas = "positive"
    reports_n_iter = True

    def __init__(self, kind, mechanism):
        self.kind = kind
        self.mechanism = mechanism

    def calibrate(self, setting):
        return first_order_params(
            self.kind, epsilon=setting.epsilon, delta=setting.delta,
            n_samples=setting.n_samples, n_classes=setting.n_classes,
            reg=setting.regularization, privacy=setting.privacy,
            n_noisy_steps=setting.n_noisy_steps, batch_size=setting.batch_size,
            max_grad_norm=setting.max_grad_norm, learning_rate=setting.learning_rate,
        )

    def example_guarantee(self, setting, params):
        if params["sample_rate"] == 1.0:
            return _gaussian_example_guarantee(setting, params)
        # PLD where the label record is described (the tractable range), else Renyi DP.
        described = "dominating_pair" in params
        example_epsilon = subsampled_gaussian_epsilon(
            params["noise_multiplier"], params["sample_rate"], params["n_noisy_steps"],
            setting.delta, method="pld" if described else "rdp")
        return example_epsilon, setting.delta

    def privacy_spend(self, setting, params):
        if params["sample_rate"] == 1.0:
            return super().privacy_spend(setting, params)
        example = self.example_guarantee(setting, params)
        return PrivacySpend.leaf(
            self.mechanism, params["label_epsilon"], setting.delta, privacy=setting.privacy,
            description=_description(params), **params, **_example_params(example),
        )

    def train(self, codes, *, Z, setting, params, random_state):
        return noisy_first_order_logistic(
            codes, Z=Z, n_classes=setting.n_classes, optimizer=self.kind,
            n_noisy_steps=params["n_noisy_steps"], reg=params["regularization"],
            learning_rate=params["learning_rate"], sample_rate=params["sample_rate"],
            clip_norm=params["max_grad_norm"], expected_batch_size=params["expected_batch_size"],
            noise_std=params["noise_scales"]["gradient"], random_state=random_state,
        )


class _RandomizedResponse(_Solver):
    """Randomized response on the labels, then the (debiased) loss's minimiser.

    Label DP only (the features are not protected): one eps-DP release of all
    the labels, described by ``("randomized_response", (epsilon, K))``, so
    the leaf's ``delta`` is 0 whatever the fit's ``delta``. The minimiser is
    post-processing of the randomized labels.
    """

    kind = "randomized_response"
    mechanism = "randomized response"
    deltas = "any"
    reports_n_iter = False

    def calibrate(self, setting):
        return randomized_response_params(
            epsilon=setting.epsilon, n_classes=setting.n_classes, reg=setting.regularization)

    def privacy_spend(self, setting, params):
        return PrivacySpend.leaf(
            self.mechanism, setting.epsilon, 0.0, privacy=setting.privacy,
            description=("randomized_response", (setting.epsilon, setting.n_classes)), **params,
        )

    def train(self, codes, *, Z, setting, params, random_state):
        return randomized_response_erm(
            codes, Z=Z, n_classes=setting.n_classes, loss=setting.loss, params=params,
            tol=setting.tol, max_iter=setting.max_iter, random_state=random_state,
        )


SOLVERS = {
    "randomized_response": _RandomizedResponse(),
    "objective": _Perturbation("objective", "any"),
    "output": _Perturbation("output", "any"),
    "newton": _SecondOrder("newton", "DP-Newton"),
    "fc": _SecondOrder("fc", "DP-FC"),
    "sgd": _FirstOrder("sgd", "DP-SGD"),
    "adam": _FirstOrder("adam", "DP-Adam"),
}
