"""LabelDP-Pro's ALTCONV denoiser: DP-SGD's noisy gradient projected onto label-free gradients.

LabelDP-Pro (Ghazi, Huang, Kamath, Kumar, Manurangsi and Zhang 2024) keeps
DP-SGD's noisy steps and replaces each step's noisy average gradient ``g~`` by
its projection onto a convex set computed from public features alone. With
the ALTCONV denoiser the set is the convex hull of the per-example per-class
gradients ``grad l(theta, (x_i, k))`` of an independently sampled
"alternative" batch of ``n2`` rows, every class ``k`` in turn: no label is
read, and the batch does not depend on which rows DP-SGD sampled, so the
projection is post-processing of the subsampled Gaussian mechanism and DP-SGD's
label-DP accounting holds unchanged (their Section 3.4).

The projection solves ``min ||G a - g~||^2`` over the unit simplex of
``a in R^(n2 K)``, where the columns of the ``d x n2 K`` matrix ``G`` are those
gradients, by projected gradient descent,
``a <- Proj_simplex(a - 2 eta G^T (G a - g~))``, with the simplex projection
of Wang and Carreira-Perpinan (2013). ``G`` is never formed: ``G^T v`` is a
Jacobian-vector product (forward mode) of the map ``theta -> [l(theta, (x_i,
k))]_{i,k}`` and ``G u`` a vector-Jacobian product (reverse mode) of the same
map (their Section 3.2 and Appendix C). The coefficients are then smoothed
towards the uniform weights, ``a~ = lambda a + (1 - lambda) / (n2 K)``
(their Section 3.3, ``lambda = 0.75``), and the step uses ``G a~``.

Where the paper leaves a choice open. Its matrix ``G`` (Section 3.2) and
pseudocode (Appendix C) hold the unclipped per-class gradients, as here by
default, while its analysis (Lemma 4) assumes every one has norm at most
``C``; ``clip_per_class=True`` clips the columns to DP-SGD's
``max_grad_norm`` instead, so that the clipped batch mean that DP-SGD noises
lies in the hull (it measured worse, below). The step size ``eta`` was tuned on
``{0.01, 0.02, 0.05}`` for their networks, but its scale depends on ``||G||``
(0.02 makes the iterates oscillate for softmax regression on the digits):
the default is ``1 / (2 ||G||_2^2)``, from 20 power iterations. The start
``a_0`` is the uniform weights, the alternative batch is drawn uniformly
without replacement from all training rows (it may overlap DP-SGD's batch),
its size, which the paper does not report, defaults to DP-SGD's expected
batch size, and its gradients are taken in evaluation mode (no dropout).

Measured: a negative result on CPUs (``benchmarks/labeldp_pro.py``; plain
DP-SGD and the denoiser with the same settings and seeds; test accuracy,
DP-SGD -> LabelDP-Pro). The paper reports +1.5 to +5.5 points on MNIST at
eps <= 1; no setting measured here shows a gain.

- Digits, the default (linear) network, 3 seeds, eps 0.1 / 0.2 / 0.5:
  0.169 / 0.275 / 0.509 -> 0.133 / 0.172 / 0.290 (clipped columns 0.126 /
  0.141 / 0.198).
- Fashion-MNIST, 10,000 training and 5,000 test images, the default
  (linear) network: eps 0.1, seed 0, 0.572 -> 0.416 (clipped 0.325); eps
  0.5, clipped, 2 seeds, 0.718 -> 0.528.
- Fashion-MNIST near the paper's scale (50,000 training and 10,000 test
  images, softmax regression, batch 1024, 5 epochs, lr 0.2, their
  epsilon's range), 3 seeds, eps 0.1 / 0.2 / 0.5: 0.695 / 0.699 / 0.701
  -> 0.671 / 0.685 / 0.688 (clipped columns at eps 0.1, 2 seeds: 0.691 ->
  0.569).

A per-step diagnostic at that scale (eps 0.1, noise multiplier 20) shows
why: the projection cuts the noisy gradient's error about sixteen-fold (1.73
to 0.11 in norm, clipped columns, against a clean gradient of norm 0.09),
but what remains is a bias of about the gradient's own size, which, unlike
DP-SGD's zero-mean noise, does not average out over the steps; the
smoothing adds to it (a pull towards uniform predictions). The denoiser
costs 40 to 100 times DP-SGD's time on a CPU (200 projection steps, each a
forward- and a reverse-mode pass over the alternative batch).

References
----------
.. [1] B. Ghazi, Y. Huang, P. Kamath, R. Kumar, P. Manurangsi, C. Zhang.
   LabelDP-Pro: learning with label differential privacy via projections.
   ICLR 2024.
.. [2] W. Wang, M. A. Carreira-Perpinan. Projection onto the probability
   simplex: an efficient algorithm with a simple proof, and an application.
   arXiv:1309.1541, 2013.
"""

import copy
from numbers import Integral, Real

import numpy as np
import torch
import torch.autograd.forward_ad as fwAD
from sklearn.utils._param_validation import Interval, StrOptions, validate_parameter_constraints
from torch.func import functional_call, jacrev, vmap

from ._dp_sgd import DPSGDClassifier

__all__ = [
    "AltConvDenoiser",
    "ClassGradients",
    "LabelDPProClassifier",
    "alt_conv_denoiser",
    "project_onto_hull",
    "project_onto_simplex",
    "resolve_alt_conv",
]

# Elements of one chunk of per-example Jacobians (examples x classes x
# parameters) when the per-class gradient norms are computed: 64 MiB in float32.
_JACOBIAN_CHUNK_ELEMENTS = 2**24
# Power iterations estimating ||G||_2^2 for the automatic projection step.
_POWER_ITERATIONS = 20


def project_onto_simplex(v):
    """Euclidean projection of each row of ``v`` onto the unit simplex.

    The algorithm of Wang and Carreira-Perpinan (2013): sort each row in
    decreasing order ``u``, let ``rho`` be the largest ``j`` with
    ``u_j + (1 - u_1 - ... - u_j) / j > 0`` and shift the row by
    ``(1 - u_1 - ... - u_rho) / rho``, clipping at 0.

    Parameters
    ----------
    v : torch.Tensor of shape (..., m)

    Returns
    -------
    torch.Tensor of shape (..., m)
        Non-negative rows that sum to 1, each the point of the simplex
        nearest to the row of ``v``.

    Examples
    --------
    >>> import torch
    >>> project_onto_simplex(torch.tensor([0.75, 1.25, -1.0])).tolist()
    [0.25, 0.75, 0.0]
    """
    u = torch.sort(v, dim=-1, descending=True).values
    excess = u.cumsum(-1) - 1
    ranks = torch.arange(1, v.shape[-1] + 1, device=v.device, dtype=v.dtype)
    # The condition holds on a prefix of the sorted row, so its count is rho.
    rho = (u - excess / ranks > 0).sum(-1, keepdim=True)
    shift = excess.gather(-1, rho - 1) / rho.to(v.dtype)
    return (v - shift).clamp_min(0)


class ClassGradients:
    """The matrix ``G`` of per-example per-class gradients, as two products.

    Column ``(i, k)`` of ``G`` is the gradient in the parameters of the
    cross-entropy loss of row ``x_i`` with class ``k``, ``l(theta, (x_i, k)) =
    -log softmax(f_theta(x_i))_k``, optionally clipped to L2 norm
    ``max_norm``. Only the products ``G u`` (a vector-Jacobian product) and
    ``G^T v`` (a Jacobian-vector product) are computed, with the clipping
    factors applied to ``u`` and to the result respectively.

    Parameters
    ----------
    module : torch.nn.Module
        The network, called functionally (its own parameters are not read).
    params : dict of str to torch.Tensor
        The parameters at which the gradients are taken (names as in
        ``module.named_parameters()``).
    buffers : dict of str to torch.Tensor
        The module's buffers.
    x : torch.Tensor of shape (n2, ...)
        The rows (features only).
    max_norm : float or None
        Clip every column to this L2 norm; ``None`` leaves them as they are.

    Attributes
    ----------
    scale : torch.Tensor of shape (n2, K) or None
        The clipping factor ``min(1, max_norm / ||column||)`` of each column.
    """

    def __init__(self, module, params, buffers, x, max_norm=None):
        def losses(theta):
            logits = functional_call(module, (theta, buffers), (x,))
            return -torch.log_softmax(logits, dim=-1)

        self._losses_at = losses
        self._params = params
        # One forward pass kept for every reverse-mode product; grad mode is
        # forced on because the optimizer's step runs without it.
        self._leaves = {name: p.detach().requires_grad_(True) for name, p in params.items()}
        with torch.enable_grad():
            self._losses = losses(self._leaves)
        self.scale = None
        if max_norm is not None:
            norms = class_gradient_norms(module, params, buffers, x)
            self.scale = (max_norm / norms.clamp_min(torch.finfo(norms.dtype).tiny)).clamp(max=1)

    def matvec(self, u):
        """``G u`` for ``u`` of shape (n2, K): a dict shaped like ``params`` (reverse mode)."""
        if self.scale is not None:
            u = u * self.scale
        with torch.enable_grad():
            grads = torch.autograd.grad(self._losses, list(self._leaves.values()),
                                        grad_outputs=u, retain_graph=True, allow_unused=True)
        return {name: torch.zeros_like(p) if g is None else g
                for (name, p), g in zip(self._leaves.items(), grads, strict=True)}

    def rmatvec(self, v):
        """``G^T v`` for ``v`` shaped like ``params``: a tensor of shape (n2, K) (forward mode)."""
        with fwAD.dual_level():
            duals = {name: fwAD.make_dual(p, v[name]) for name, p in self._params.items()}
            products = fwAD.unpack_dual(self._losses_at(duals)).tangent
        return products if self.scale is None else products * self.scale


def class_gradient_norms(module, params, buffers, x):
    """L2 norms of the per-example per-class cross-entropy gradients, shape (n2, K).

    The gradient of ``l(theta, (x_i, k))`` is ``J_i^T (p_i - e_k)``, with
    ``J_i`` the Jacobian of row ``i``'s logits and ``p_i`` its softmax, so its
    squared norm is ``(p_i - e_k)^T J_i J_i^T (p_i - e_k)``: the per-example
    Jacobians are formed a chunk of rows at a time, reduced to their ``K x K``
    Gram matrices and dropped.
    """

    def logits_of_row(theta, row):
        return functional_call(module, (theta, buffers), (row[None],))[0]

    jacobians = vmap(jacrev(logits_of_row), in_dims=(None, 0))
    with torch.no_grad():
        probabilities = torch.softmax(functional_call(module, (params, buffers), (x,)), dim=-1)
    n_classes = probabilities.shape[1]
    n_params = sum(p.numel() for p in params.values())
    chunk = max(1, _JACOBIAN_CHUNK_ELEMENTS // (n_classes * n_params))
    squared = []
    for start in range(0, x.shape[0], chunk):
        jac = jacobians(params, x[start:start + chunk])
        gram = sum(j.flatten(2) @ j.flatten(2).transpose(1, 2) for j in jac.values())
        p = probabilities[start:start + chunk]
        gram_p = (gram @ p[:, :, None])[:, :, 0]
        squared.append((p * gram_p).sum(-1, keepdim=True) - 2 * gram_p
                       + gram.diagonal(dim1=1, dim2=2))
    return torch.cat(squared).clamp_min(0).sqrt().detach()


def largest_eigenvalue(gradients, like, n_iter=_POWER_ITERATIONS):
    """``||G||_2^2``, the largest eigenvalue of ``G^T G``, by power iteration.

    Starts from the uniform vector (no random number is drawn); each iteration
    is one product with ``G`` and one with ``G^T``; ``like`` gives the shape
    (n2, K), dtype and device. The estimate approaches the eigenvalue from below.
    """
    u = torch.full_like(like, like.numel() ** -0.5)
    value = torch.zeros(())
    for _ in range(n_iter):
        w = gradients.rmatvec(gradients.matvec(u))
        value = w.norm()
        if value == 0:
            break
        u = w / value
    return float(value)


def project_onto_hull(gradients, target, *, n_steps, step_size="auto", init=None):
    """Coefficients of the projection of ``target`` onto the convex hull of ``G``'s columns.

    Projected gradient descent on ``||G a - target||^2`` over the unit simplex,
    ``a <- Proj_simplex(a - 2 step_size G^T (G a - target))``, ``n_steps``
    times (Ghazi et al. 2024, Section 3.2).

    Parameters
    ----------
    gradients : ClassGradients
        The operator ``G``.
    target : dict of str to torch.Tensor
        The vector to project (the noisy gradient), shaped like the parameters.
    n_steps : int
        Projected gradient steps.
    step_size : float or "auto", default="auto"
        ``eta``; ``"auto"`` is ``1 / (2 ||G||_2^2)``, the inverse of the
        objective gradient's Lipschitz constant (:func:`largest_eigenvalue`):
        the largest step for which every step decreases the objective.
    init : torch.Tensor of shape (n2, K), default=None
        Starting coefficients in the simplex; ``None`` is the uniform weights.

    Returns
    -------
    alpha : torch.Tensor of shape (n2, K)
        Non-negative coefficients that sum to 1.
    """
    target_products = gradients.rmatvec(target)
    alpha = (torch.full_like(target_products, 1 / target_products.numel())
             if init is None else init)
    if step_size == "auto":
        curvature = largest_eigenvalue(gradients, alpha)
        if curvature == 0:  # every column is 0: any coefficients project
            return alpha
        step_size = 1 / (2 * curvature)
    for _ in range(n_steps):
        residual_products = gradients.rmatvec(gradients.matvec(alpha)) - target_products
        alpha = project_onto_simplex(
            (alpha - 2 * step_size * residual_products).flatten()
        ).view_as(alpha)
    return alpha


class AltConvDenoiser:
    """LabelDP-Pro's ALTCONV denoiser, attached to one DP-SGD training.

    At every step it samples ``alt_batch_size`` rows of the public training
    features uniformly without replacement (from its own generator, never
    from the labels or DP-SGD's batches), projects the noisy average gradient
    onto the convex hull of their per-class gradients at the current
    parameters (:func:`project_onto_hull`), smooths the coefficients towards
    the uniform weights and replaces each parameter's gradient by ``G a~``.
    The gradients of the alternative batch are taken with the network in
    evaluation mode (no dropout), so that ``G`` is the same matrix in every
    product of one projection.

    Parameters
    ----------
    alt_batch_size : int
        Rows of the alternative batch, ``n2`` (at most the number of rows).
    smoothing : float
        ``lambda`` in ``a~ = lambda a + (1 - lambda) / (n2 K)``; 1 is none.
    projection_steps : int
        Projected gradient descent steps per projection.
    projection_lr : float or "auto"
        Their step size ``eta`` (see :func:`project_onto_hull`).
    max_norm : float or None
        Clipping norm of the per-class gradients (DP-SGD's ``max_grad_norm``);
        ``None`` projects onto the unclipped gradients.
    rng : numpy.random.Generator
        Source of the alternative batches.
    """

    def __init__(self, alt_batch_size, smoothing, projection_steps, projection_lr, max_norm,
                 rng):
        self.alt_batch_size = alt_batch_size
        self.smoothing = smoothing
        self.projection_steps = projection_steps
        self.projection_lr = projection_lr
        self.max_norm = max_norm
        self.rng = rng

    def attach(self, module, X):
        """Keep a hook-free copy of ``module``, its parameters and the features ``X``.

        Called before Opacus wraps ``module``: the copy carries none of its
        hooks, and is only ever called with the original's current parameter
        values.
        """
        if not isinstance(X, (np.ndarray, torch.Tensor)):
            raise TypeError(
                "LabelDP-Pro's denoiser samples rows of the training features: X "
                f"must be a numpy array or a torch tensor, got {type(X).__name__}."
            )
        self._params = dict(module.named_parameters())
        self._names = {id(p): name for name, p in self._params.items()}
        self._buffers = dict(module.named_buffers())
        first = next(iter(self._params.values()))
        self._module = copy.deepcopy(module).eval().requires_grad_(False)
        self._X = torch.as_tensor(X).to(device=first.device, dtype=first.dtype)

    def sample_rows(self):
        """Indices of the next alternative batch: uniform, without replacement, label-free."""
        n = self._X.shape[0]
        return np.sort(self.rng.choice(n, min(self.alt_batch_size, n), replace=False))

    def __call__(self, params):
        """Replace each parameter's ``.grad`` (the noisy average) by its denoised value."""
        names = self._names
        theta = {name: p.detach() for name, p in self._params.items()}
        rows = torch.as_tensor(self.sample_rows(), device=self._X.device)
        gradients = ClassGradients(self._module, theta, self._buffers, self._X[rows],
                                   self.max_norm)
        noisy = {name: torch.zeros_like(p) for name, p in theta.items()}
        for p in params:
            noisy[names[id(p)]] = p.grad.detach()
        alpha = project_onto_hull(gradients, noisy, n_steps=self.projection_steps,
                                  step_size=self.projection_lr)
        smoothed = self.smoothing * alpha + (1 - self.smoothing) / alpha.numel()
        denoised = gradients.matvec(smoothed)
        for p in params:
            p.grad = denoised[names[id(p)]].detach().view_as(p).to(p.grad.dtype)

    def detach(self):
        """Drop the module copy, parameters, features and generator: nothing outlives training."""
        for name in ("_module", "_params", "_names", "_buffers", "_X"):
            self.__dict__.pop(name, None)
        self.rng = None


# The paper's defaults (Ghazi et al. 2024, Section 3.3 and Appendix D.2): lambda
# 0.75 and 200 projection steps. Their step size was tuned on {0.01, 0.02, 0.05}
# for their networks; its scale depends on ||G|| (0.02 oscillates for softmax
# regression on the digits, where 1 / (2 ||G||^2) is about 0.002), so the
# default is that bound. The alternative batch size is not reported: None is
# DP-SGD's expected batch. Unclipped per-class gradients, as their G (Section 3.2,
# Appendix C).
ALT_CONV_DEFAULTS = {
    "alt_batch_size": None,
    "smoothing": 0.75,
    "projection_steps": 200,
    "projection_lr": "auto",
    "clip_per_class": False,
}

_ALT_CONV_CONSTRAINTS = {
    "alt_batch_size": [Interval(Integral, 1, None, closed="left"), None],
    "smoothing": [Interval(Real, 0, 1, closed="both")],
    "projection_steps": [Interval(Integral, 1, None, closed="left")],
    "projection_lr": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
    "clip_per_class": ["boolean"],
}


def resolve_alt_conv(denoiser_params, expected_batch_size, n_samples):
    """The ALTCONV settings of a fit: ``denoiser_params`` over the defaults, checked.

    Parameters
    ----------
    denoiser_params : dict or None
        Keys among ``alt_batch_size``, ``smoothing``, ``projection_steps``,
        ``projection_lr`` and ``clip_per_class``.
    expected_batch_size : float
        DP-SGD's expected batch size ``q n``: the default alternative batch.
    n_samples : int
        Rows of the training set: the largest alternative batch.

    Returns
    -------
    dict
        Every setting, ``alt_batch_size`` resolved to an int.

    Raises
    ------
    ValueError
        For an unknown key or a value out of range, naming it.
    """
    given = {} if denoiser_params is None else dict(denoiser_params)
    unknown = sorted(set(given) - set(ALT_CONV_DEFAULTS), key=str)
    if unknown:
        raise ValueError(
            f"LabelDPProClassifier: unknown denoiser_params {unknown}; "
            f"the keys are {sorted(ALT_CONV_DEFAULTS)}."
        )
    settings = {**ALT_CONV_DEFAULTS, **given}
    validate_parameter_constraints(_ALT_CONV_CONSTRAINTS, settings,
                                   caller_name="LabelDPProClassifier's denoiser_params")
    if settings["alt_batch_size"] is None:
        settings["alt_batch_size"] = max(1, round(expected_batch_size))
    settings["alt_batch_size"] = min(int(settings["alt_batch_size"]), n_samples)
    settings["smoothing"] = float(settings["smoothing"])
    settings["projection_steps"] = int(settings["projection_steps"])
    if settings["projection_lr"] != "auto":
        settings["projection_lr"] = float(settings["projection_lr"])
    settings["clip_per_class"] = bool(settings["clip_per_class"])
    return settings


def alt_conv_denoiser(settings, max_grad_norm, rng):
    """An :class:`AltConvDenoiser` with resolved ``settings`` (:func:`resolve_alt_conv`)."""
    return AltConvDenoiser(
        settings["alt_batch_size"],
        settings["smoothing"],
        settings["projection_steps"],
        settings["projection_lr"],
        max_grad_norm if settings["clip_per_class"] else None,
        rng,
    )


class LabelDPProClassifier(DPSGDClassifier):
    """DP-SGD whose every noisy step is denoised by LabelDP-Pro's ALTCONV projection.

    Measured, not offered: at the scale closest to the paper's that two CPU
    cores allow it trailed plain DP-SGD with the same settings (see the
    module docstring), so the library keeps it for ``benchmarks/labeldp_pro.py``
    and does not export it. Everything is :class:`DPSGDClassifier`'s, with the
    projection of :class:`AltConvDenoiser` after every step's noisy average:
    the label-DP record (``epsilon_``, ``delta_``, the spend's description)
    is plain DP-SGD's with the same settings, post-processing, while
    ``example_epsilon_`` is ``inf``, since the alternative batches' features
    are read without noise.

    Parameters
    ----------
    estimator, epsilon, delta, max_grad_norm, accounting, classes, random_state, \
accountant, verbose
        As :class:`DPSGDClassifier`'s.
    denoiser_params : dict, default=None
        Each key optional: ``"alt_batch_size"`` (rows of the alternative
        batch; None, the default, is DP-SGD's expected batch size, at most
        ``n``), ``"smoothing"`` (``lambda`` in [0, 1] of ``a~ = lambda a + (1
        - lambda) / (n2 K)``; 0.75), ``"projection_steps"`` (projected
        gradient steps per projection, >= 1; 200), ``"projection_lr"`` (their
        step size, positive, or ``"auto"``, the default, ``1 / (2
        ||G||_2^2)``) and ``"clip_per_class"`` (clip the per-class gradients
        to ``max_grad_norm``; False, as in the paper's matrix ``G``). The
        resolved values are recorded in ``mechanism_params_`` beside
        ``"denoiser": "alt_conv"``.
    """

    _parameter_constraints: dict = {
        **DPSGDClassifier._parameter_constraints,
        "denoiser_params": [dict, None],
    }

    def __init__(
        self,
        estimator=None,
        *,
        epsilon=1.0,
        delta=1e-5,
        max_grad_norm=1.0,
        accounting="deprecated",
        classes=None,
        random_state=None,
        accountant=None,
        verbose=0,
        denoiser_params=None,
    ):
        super().__init__(estimator, epsilon=epsilon, delta=delta, max_grad_norm=max_grad_norm,
                         accounting=accounting, classes=classes, random_state=random_state,
                         accountant=accountant, verbose=verbose)
        self.denoiser_params = denoiser_params

    def _denoiser_settings(self, expected_batch_size, n_samples):
        return {"denoiser": "alt_conv",
                **resolve_alt_conv(self.denoiser_params, expected_batch_size, n_samples)}

    def _make_denoiser(self, settings, max_grad_norm, rng, *, trial=False):
        if trial:  # one projection step suffices to check the shapes
            settings = {**settings, "projection_steps": 1}
        return alt_conv_denoiser(settings, max_grad_norm, rng)
