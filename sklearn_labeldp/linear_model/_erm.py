"""Private ERM estimators: DPLogisticRegression and DPLinearSVC.

Each is its loss, its parameters and solvers, and its documentation; the
shared fit (the feature map, the plan from public information, the private
training through ``PrivateLabels.release`` and the model reported on the raw
features) is ``_BasePrivateERM`` in ``_erm_base``, whose module docstring
gives the feature map and the meaning of ``C``.
"""

from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..utils import is_dask
from ._erm_base import _BasePrivateERM
from ._losses import HuberHingeLoss, LogisticLoss, logistic_probabilities

__all__ = ["DPLinearSVC", "DPLogisticRegression"]


class DPLogisticRegression(_BasePrivateERM):
    """Logistic regression with label DP (or full DP): randomized labels, private ERM, DP-SGD.

    Minimises ``J(f) = (1/n) sum_i log(1 + exp(-y_i f.z_i)) + (Lambda/2)
    ||f||^2`` over the mapped rows ``z``: each row clipped to ``data_norm``,
    divided by it and, with ``fit_intercept``, extended by a constant 1 and
    divided by ``sqrt(2)``, so that ``||z|| <= 1``. ``Lambda = 1 / (2 C n)``
    (``1 / (C n)`` without intercept): at ``epsilon -> inf`` the model is
    scikit-learn's ``LogisticRegression(C, solver="liblinear",
    intercept_scaling=1)`` on ``x / data_norm``, whose intercept is
    regularised too. ``coef_`` and ``intercept_`` are reported on the raw
    features. With ``K > 2`` classes, one-vs-rest.

    The solvers (``solver``) are calibrated from public quantities only
    (``epsilon``, ``delta``, ``n``, ``C``, the number of classes, the step
    count, batch size and clipping norm); the fitted ``mechanism_params_``
    holds what they chose.

    Privacy. ``(epsilon, delta)`` is always the label-DP budget charged to the
    accountant, whose neighbouring relation is the change of one label, and
    every solver is calibrated so that a label change costs at most that,
    under ``privacy="full"`` too. ``privacy="full"`` protects whole examples
    besides, for the relation of each solver's paper, and reports that
    guarantee as ``example_epsilon_`` and ``example_delta_`` (the same noise's
    guarantee for substituting a whole example under objective and output
    perturbation, for adding or removing one under the Gaussian solvers). An
    add/remove ``(eps, delta)`` guarantee alone is not an ``(eps, delta)``
    guarantee for a label change (a removal followed by an addition: ``(2 eps,
    (1 + e^eps) delta)`` by group privacy, Dwork and Roth 2014), so every
    solver's noise is calibrated to what a label change costs: the label
    sensitivities of objective and output perturbation, the label-change
    sensitivity of each Gaussian release (one Gaussian, exact profile, Balle
    and Wang 2018) and, for Poisson minibatches, the label change's dominating
    pairs; see each solver below.

    - ``"auto"`` (the default): resolved from public quantities only and
      reported as ``solver_``: under label DP, ``"randomized_response"``
      unless the randomized labels' noise in the mean gradient, about
      ``sqrt((rho - 1) / n)`` with ``rho`` the factor by which randomized
      response inflates a label's variance, exceeds ``r`` times objective
      perturbation's, ``d / (n eps_problem)`` (few features for the rows),
      with ``r = 2`` while ``rho <= 10`` (``epsilon >= 0.66`` for two classes,
      ``0.77`` for three, ``1.2`` for ten) and 1 beyond; then ``"objective"``
      (``"newton"`` for a dask ``X`` with ``delta > 0``). On 30 splits of
      105-200 rows the factor 2 picked the better solver or one within 0.8
      points (the iris at epsilon 1: 0.819 against 0.758); beyond ``rho =
      10`` it keeps objective perturbation on the digits and breast cancer at
      epsilon 0.5 and takes the randomized labels on 2,000 Fashion-MNIST
      images at epsilon 1 (0.595 against 0.257, 9 splits), see
      :func:`~sklearn_labeldp.linear_model._randomized_labels.auto_solver`.
    - ``"randomized_response"``: label DP only. The labels are randomized
      once by K-ary randomized response (Warner 1965: kept with probability
      ``e^eps / (e^eps + K - 1)``, else a uniform other class), pure
      epsilon-DP whatever ``delta`` (``delta_ = 0``), and each one-vs-rest
      problem minimises the debiased logistic loss of the randomized labels
      (Natarajan et al. 2013: the loss plus a linear term, whose expectation
      is the clean loss) plus the ridge; all of it after the randomization is
      post-processing.
    - ``"objective"`` and ``"output"``: objective and output
      perturbation (Chaudhuri et al. 2011), pure epsilon-DP (``delta=0``).
      Under label DP a flip of one binary label moves that example's gradient
      by exactly ``z`` (``g = 1``, where the paper has 2 for whole examples)
      and leaves the loss Hessian unchanged (``r = 0``: ``l''`` is even), so
      objective perturbation minimises ``J(f) + b.f / n`` with ``b`` of density
      proportional to ``exp(-eps ||b||)`` and no extra regularisation, and
      output perturbation adds ``b`` of density ``exp(-(n Lambda eps / g)
      ||b||)`` to the exact minimiser of ``J``. With ``K > 2`` classes a label
      change alters 2 of the K binary problems, which run with ``epsilon /
      2`` each. ``privacy="full"`` draws the same noise and reports its
      guarantee for substituting a whole example (``g = 2``, ``r = 2``, all
      ``K`` problems): ``example_epsilon_ = m (2 / (n Lambda scale))``
      (output) or ``m (2 / scale + 2 log(1 + c / (n (Lambda + Delta))))``
      (objective), e.g. ``2 epsilon`` (two classes) and ``K epsilon`` for
      output perturbation of the logistic loss. Where ``r > 0`` (the Huber
      hinge of :class:`DPLinearSVC`) objective perturbation keeps ``eps' = eps
      - r log(1 + c / (n (Lambda + Delta)))`` for its noise, with ``Delta = 0``
      when that is at least ``eps / 2`` and otherwise the extra
      regularisation ``Delta`` for which it is ``eps / 2`` (an amendment of
      the paper's rule that is equally private and never keeps less).

      With ``delta > 0`` both draw Gaussian noise ``b ~ N(0, sigma^2 I)``
      instead, for all the binary problems as one release (``t`` = 1 problem
      touched by a label change for two classes, 2 of the K otherwise):
      output perturbation's minimisers move by at most ``sqrt(t) g / (n
      Lambda)``, ``mu = sqrt(t) g / (n Lambda sigma)``; objective
      perturbation's ``b = -n grad J(f)`` is recovered from the release and
      moves by at most ``sqrt(t) g`` while the logistic loss's Hessian does
      not move, ``mu = sqrt(t) g / sigma`` exactly (the Gaussian form of
      Kifer, Smith and Thakurta 2012, without its Jacobian term). ``mu`` is
      the largest whose exact privacy profile (Balle and Wang 2018) is within
      ``(epsilon, delta)`` (``mechanism_params_``: ``noise="gaussian"``,
      ``noise_scale = sigma``, ``gaussian_mu``; ``privacy="full"`` reports the
      substitution's ``example_gaussian_mu`` and, for objective
      perturbation, ``example_jacobian_epsilon``). No split of epsilon over
      the problems: on the digits at eps 1 objective perturbation goes from
      0.567 to 0.833 (9 splits).

      Both guarantees hold for the exact minimiser only: Newton's method (at
      most 500 mapped features) or L-BFGS runs until the gradient norm is at
      most ``tol``, and a :class:`~sklearn_labeldp.exceptions.ReleaseError`
      is raised when ``max_iter`` iterations do not get there (no model is
      returned). Its message is fixed: it names ``tol`` and ``max_iter`` but
      not the final gradient norm, which would identify a missing label.
      Whether the optimiser converges depends on the labels, so the error is
      itself a (rare) label-dependent event: choose ``max_iter`` generously.
      The budget is charged before training, also when the fit then fails.
    - ``"newton"`` and ``"fc"``: DP-Newton and DP-FC (Mehta et al. 2023),
      ``T = n_noisy_steps`` full-batch steps from 0 of all the binary problems
      at once, with Gaussian noise of std ``s * sensitivity / n`` on each
      released mean (``delta`` in (0, 1)); the releases compose into one
      Gaussian of ``mu`` noise stds for a label change, the largest whose
      exact privacy profile (Balle and Wang 2018) is within ``(epsilon,
      delta)`` (``mechanism_params_["gaussian_mu"]``, ``rho = mu^2 / 2``). Only
      the gradients read the labels: a label change
      moves the gradient sum by ``(e_old - e_new) z^T`` (L2 norm ``sqrt(2)``
      for K > 2, 1 for K = 2) and the Hessians and Gram matrix, functions of
      the features and of the earlier outputs, not at all. Under label DP the
      gradient's noise is scaled to that and the curvature is exact: ``rho = T
      / (2 s^2)``. Under full DP (add/remove one example, as in Mehta et al.)
      the gradient's noise is scaled to its add/remove sensitivity ``sqrt(m)``
      and, for Newton, each step's Hessians (``sqrt(m) / 4``) or, for FC, the
      Gram matrix once (1) are noised too; a label change then costs ``rho = T
      Delta^2 / (2 m s^2)`` (``Delta`` = 1 or ``sqrt(2)`` as above), so the
      gradient gets label DP's noise, and the add/remove guarantee of the same
      noise, ``example_rho = T / s^2`` (Newton) or ``(T + 1) / (2 s^2)`` (FC),
      is ``example_epsilon_`` at ``delta``. Newton steps by the (noisy,
      PSD-projected) Hessian plus ``Lambda I``; FC by ``G / (4n) + Lambda I``,
      the logistic loss's fixed curvature bound. Noisy matrices get symmetric
      noise ``(E + E^T) / 2`` with ``E`` iid. ``max_iter`` and ``tol`` are not
      used. Both also fit a dask ``X`` (rows chunked) and ``y``, ``classes``
      given: each step's exact sums are reduced blockwise and the noise is
      added on the client, as for numpy input (the other solvers refuse dask).
    - ``"sgd"`` and ``"adam"``: DP-SGD (Abadi et al. 2016) and its Adam variant
      DP-Adam, the first-order baseline of Mehta et al. (2023), on the same
      per-class sigmoid cross-entropy: ``T = n_noisy_steps`` steps from 0, each
      releasing a noisy mean gradient (the sum of the batch's per-example
      gradients plus Gaussian noise of std ``s`` times its sensitivity,
      divided by the expected batch size ``q n``), then a step of plain SGD
      or of Adam (``beta1 = 0.9``, ``beta2 = 0.999``, ``1e-8``, bias-corrected)
      with ``learning_rate``, both post-processing. ``delta`` in (0, 1).

      * Full batch (``batch_size=None``, ``q = 1``), accounted in zCDP for a
        label change: ``rho``, the largest that converts to ``(epsilon,
        delta)``. Under label DP no gradient is clipped: a label change moves
        one example's gradient ``(sigmoid(theta z) - e) z^T`` by ``(e_old -
        e_new) z^T``, of Frobenius norm at most ``Delta = sqrt(2)`` (1 for two
        classes), the sensitivity, and ``rho = T / (2 s^2)``. Under full DP
        every per-example gradient, the whole ``m x d`` matrix, is clipped to
        ``C = max_grad_norm`` in Frobenius norm, the add/remove sensitivity the
        noise is scaled to; a label change moves the clipped sum by at most
        ``min(2 C, Delta)`` (both clipped terms have norm ``<= C``, and
        clipping is a projection onto a convex set, so it does not increase
        their distance), so ``mu^2 = T min(2 C, Delta)^2 / (s^2 C^2)`` (one
        Gaussian, exact profile) and the add/remove ``example_gaussian_mu^2 = T
        / s^2``.
      * Poisson minibatches (``batch_size=b``, full DP only): every row joins
        each step's batch independently with probability ``q = b / n`` and
        gradients are clipped to ``max_grad_norm``. The label change is
        accounted directly (privacy loss distributions, the ``accounting``
        extra): every clipped gradient has norm ``<= B = min(C, sqrt(m))`` and
        a label change moves it by ``<= D = min(2 C, Delta)``, so the
        replace-one pair ``+-B`` dominates each step and, with two classes
        (whose two gradients straddle 0 along ``z``), the add/remove pair of
        sensitivity ``D`` does too (Zhu, Dong and Wang 2022; Lebeda et al.
        2024); ``s`` is the smallest noise multiplier within ``(epsilon,
        delta)`` by either. ``epsilon_`` is that label epsilon (at most
        ``epsilon``) at ``delta``, ``example_epsilon_`` the run's add/remove
        guarantee at ``delta``. Under label DP no
        minibatch is offered: ``batch_size`` with ``privacy="label"`` raises
        a ``ValueError`` (before any budget is charged).

      The sampling and the noise come from the fit's mechanism generator;
      ``max_iter`` and ``tol`` are not used.

    Row-norm bound. ``data_norm="auto"`` (the default) is the median of the
    L2 row norms of the training ``X``, so about half of the rows (the
    longest) are clipped along their own direction and long rows do not
    inflate the noise; under label DP the features are public and this costs
    no privacy, and ``clipped_fraction_`` reports the share of rows clipped (a
    given bound that clips more than half warns with a
    :class:`~sklearn_labeldp.linear_model.RowClippingWarning`). Under
    ``privacy="full"`` pass a public bound: ``"auto"`` reads the private
    features and warns with a
    :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`, and the clipped
    share is not released.

    Parameters
    ----------
    epsilon : float, default=1.0
        Label-DP epsilon of the fit, charged to the accountant, also under
        ``privacy="full"`` (whose example-level guarantee is
        ``example_epsilon_``).
    delta : float, default=0.0
        Label-DP delta. In (0, 1) for ``"newton"``, ``"fc"``, ``"sgd"`` and
        ``"adam"``; for ``"objective"`` and ``"output"``, 0 (pure DP, noise of
        density proportional to ``exp(-||b|| / scale)``) or in (0, 1)
        (Gaussian noise, one joint release); unused by
        ``"randomized_response"`` (pure DP).
    C : float or "auto", default="auto"
        Inverse regularisation strength, scikit-learn's: ``Lambda = 1 / (2 C n)`` on the
        mapped rows, ``1 / (C n)`` without intercept. ``"auto"``, resolved from public
        quantities only and reported as ``C_``: for ``"randomized_response"`` ``Lambda =
        min(d, 9) (rho - 1) / (27 n) + 1 / (200 n)``, with ``rho`` the factor by which
        randomized response inflates a label's variance (the ridge of noisy labels, plus ``C
        = 100`` for clean ones); for ``"newton"`` and ``"fc"`` the ``Lambda = (1/4) sqrt(d /
        2) sigma`` of the noise std ``sigma`` on the released mean gradient and the mapped
        dimension ``d`` (in the spirit of AdaSSP, Wang 2018: as much ridge as the noise
        moves the curvature), and for ``"newton"`` under ``privacy="label"`` at least
        ``(1/4) sigma^2 / 0.01``, the ridge of a noisy Newton step's bias-variance balance
        for a fixed signal (Hoerl and Kennard 1970; it matters on small data only); for
        ``"objective"`` and ``"output"`` ``Lambda = c nu`` and ``nu``, with ``nu = d g / (n
        eps_problem)`` the noise's expected norm as a perturbation of the mean gradient and
        ``c`` the loss's curvature bound; 1 for ``"sgd"`` and ``"adam"``.
    data_norm : float or "auto", default="auto"
        Bound on the L2 row norms; rows above it are clipped to it. ``"auto"``:
        the median of the row norms of the training ``X``, which clips about
        half of the rows (the largest row norm if that median is 0, 1 if every
        row is zero).
    solver : {"auto", "randomized_response", "objective", "output", "newton", "fc", "sgd", \
            "adam"}, default="auto"
        The private training (see above); ``"auto"`` is resolved from
        public quantities and reported as ``solver_``.
    privacy : {"label", "full"}, default="label"
        ``"label"``: the features are public, only the labels are protected.
        ``"full"``: whole examples are protected too, for the substitution of
        one example (objective/output) or adding or removing one
        (newton/fc/sgd/adam), reported as ``example_epsilon_`` and
        ``example_delta_``. Either way the fit is calibrated to be ``(epsilon,
        delta)``-DP for a label change, and charged that.
    fit_intercept : bool, default=True
        Fit an intercept as a constant feature inside the norm bound (it is
        regularised).
    max_iter : int, default=1000
        Iterations allowed to the optimiser of the exact minimiser
        (``"objective"``, ``"output"``).
    tol : float, default=1e-6
        Gradient-norm tolerance of the exact minimiser (``"objective"``,
        ``"output"``).
    n_noisy_steps : int or "auto", default="auto"
        Number ``T`` of noisy steps of ``"newton"``, ``"fc"``, ``"sgd"`` and
        ``"adam"``; the noise per step grows like ``sqrt(T)`` (full batch).
        ``"auto"``, resolved from public quantities and reported as
        ``n_noisy_steps_``: 5 for ``"newton"`` and ``"fc"``; for ``"sgd"`` and
        ``"adam"`` the largest ``T`` whose accumulated noise, a random walk of
        ``T`` steps of the learning rate times the noise on each released mean
        gradient, stays within a std of 1 per coefficient in the mapped
        features' units (``T = n sqrt(2 rho) / 4`` for two classes under label DP, ``rho``
        the zCDP of ``(epsilon, delta)``), for ``"adam"`` at least
        ``1 / learning_rate^2`` (100: its normalised steps walk about the rate
        per coordinate), clipped to ``[10, 1000]``; the same rule for Poisson
        minibatches.
    batch_size : int, default=None
        ``"sgd"`` and ``"adam"`` only: the expected size ``b`` of a Poisson
        batch (sampling rate ``b / n``, ``1 <= b <= n``), under
        ``privacy="full"`` only; ``None``: full batch.
    learning_rate : float, default=None
        ``"sgd"`` and ``"adam"`` only; ``None``: 4 for ``"sgd"`` (the inverse
        of the logistic loss's curvature bound 1/4: on rows of norm at most 1 a
        noiseless step never increases ``J`` while ``Lambda <= 1/4``), 0.1 for
        ``"adam"``.
    max_grad_norm : float, default=None
        ``"sgd"`` and ``"adam"`` under ``privacy="full"``: the Frobenius norm
        ``C`` every per-example gradient is clipped to, the add/remove
        sensitivity (a label change moves the sum by ``min(2 C, sqrt(2))``,
        ``min(2 C, 1)`` for two classes);
        ``None``: 1 for two classes, ``sqrt(K)`` for ``K > 2``, a bound every
        gradient already meets, so nothing is clipped. Unused under label DP.
    classes : array-like, default=None
        All possible labels; ``None`` infers them from ``y`` and emits a
        :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`.
    random_state : None, "secure", int, numpy.random.Generator or RandomState, default=None
        Randomness of the mechanism: fresh entropy for every fit with
        ``None`` or ``"secure"``, nothing of it kept; an int or generator is
        a replay key, and pickling a model fitted with one warns (see
        :ref:`randomness`).
    accountant : BudgetAccountant, default=None
        Charged with ``(epsilon_, delta_)`` before any label is used.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) for two classes, else (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    solver_ : str
        The solver used: ``solver``, or the one ``"auto"`` resolved to.
    C_ : float
        The ``C`` used: ``C``, or the value ``"auto"`` resolved to (also in
        ``mechanism_params_["C"]``).
    n_noisy_steps_ : int
        Solvers "newton", "fc", "sgd" and "adam": the ``T`` used,
        ``n_noisy_steps`` or the value ``"auto"`` resolved to (also
        ``mechanism_params_["n_noisy_steps"]``).
    n_iter_ : int
        ``n_noisy_steps_``, for the solvers "newton", "fc", "sgd" and "adam"
        only. Objective and output perturbation do not report their
        optimiser's iteration count: it depends on the labels, and the
        guarantee covers only the coefficients.
    mechanism_params_ : dict
        The calibrated parameters of the mechanism, all public (functions of
        ``epsilon``, ``delta``, ``n``, ``C`` and the number of classes).
        ``n_problems``, ``regularization`` (``Lambda``) and, for
        ``"randomized_response"``: ``release_epsilon``, ``keep_probability``
        and ``flip_probability`` (to each other class); for
        ``"objective"`` and ``"output"``: ``release_epsilon``,
        ``gradient_sensitivity`` (``g``) and ``noise_scale`` (the noise ``b``
        has density proportional to ``exp(-||b|| / noise_scale)``), plus for
        ``"objective"`` ``hessian_rank`` (``r``), ``curvature_bound``
        (``c``), ``epsilon_prime`` (``eps'``) and ``extra_regularization``
        (``Delta``); for ``"newton"`` and ``"fc"``: ``n_noisy_steps``, ``rho``,
        ``gaussian_mu``, ``noise_multiplier`` (``s``), ``sensitivities`` and
        ``noise_scales`` (per released statistic: ``"gradient"``, and
        ``"hessian"`` or ``"gram"`` under full DP); for ``"sgd"`` and ``"adam"``: ``n_noisy_steps``,
        ``noise_multiplier`` (``s``), ``sample_rate`` (``q``),
        ``expected_batch_size`` (``q n``), ``max_grad_norm`` (the clipping
        norm used, the parameter's value or its default; ``None`` under label
        DP), ``learning_rate`` (the parameter's value or its default),
        ``sensitivities`` and ``noise_scales`` (key
        ``"gradient"``, the noise on the released mean), and ``rho`` and
        ``gaussian_mu`` for full batch (``dominating_pair`` for Poisson
        minibatches). ``rho`` is always the zCDP parameter for a label change, and
        ``sensitivities`` those the noise is scaled to (add/remove under full
        DP); the Gaussian solvers under full DP add ``label_sensitivities``
        (how far a label change moves each release: 0 for the Hessians and
        the Gram matrix) and, except Poisson minibatches, ``example_rho``
        (zCDP for adding or removing one example).
    data_norm_ : float
        The row-norm bound used (``data_norm``, or for ``"auto"`` the median
        of the row norms).
    clipped_fraction_ : float
        Label DP only: the share of training rows of norm above ``data_norm_``
        (by more than rounding), which were clipped. Not set under
        ``privacy="full"``, where it would be an unprotected statistic of the
        private features.
    epsilon_ : float
        Label-DP epsilon of the fit, at most ``epsilon`` (``epsilon`` itself
        except for Poisson minibatches, whose is ``2 example_epsilon_``).
    delta_ : float
        Label-DP delta, at most ``delta``.
    example_epsilon_ : float
        ``privacy="full"`` only: the guarantee for whole examples.
        Substitution of one example for ``"objective"`` and ``"output"``
        (``2 epsilon`` for two classes and ``K epsilon`` for K > 2 under output
        perturbation, more under objective: see Privacy above); adding or
        removing one for the Gaussian solvers: ``example_rho`` converted at
        ``delta`` (full batch; it may exceed ``epsilon_``: a label change moves
        only the gradients), or dp-accounting's subsampled-Gaussian epsilon at
        ``example_delta_`` (Poisson minibatches, at most ``epsilon / 2``).
    example_delta_ : float
        ``privacy="full"`` only: 0 (objective, output), ``delta`` (full
        batch) or ``delta / (1 + e^(epsilon / 2))`` (Poisson minibatches).
    privacy_spend_ : PrivacySpend
        The leaf charged: budget ``(epsilon_, delta_)``, ``rho`` (label
        change) where the run has one, and under full DP ``example_epsilon``
        and ``example_delta`` among its params.
    n_features_in_ : int

    See Also
    --------
    DPLinearSVC : The same private ERM with the Huber hinge loss.
    DPLeastSquaresClassifier : Least squares from noisy sufficient statistics.

    References
    ----------
    .. [1] K. Chaudhuri, C. Monteleoni, A. D. Sarwate. Differentially private
       empirical risk minimization. JMLR 12, 2011.
    .. [2] H. Mehta, W. Krichene, A. Thakurta, A. Kurakin, A. Cutkosky.
       Differentially private image classification from features. TMLR 2023:
       DP-Newton and DP-FC, full batch, zCDP; DP-Adam as their baseline.
    .. [3] M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar,
       L. Zhang. Deep learning with differential privacy. CCS 2016: DP-SGD.
    .. [4] M. Bun, T. Steinke. Concentrated differential privacy:
       simplifications, extensions, and lower bounds. TCC 2016: zCDP of
       Gaussian releases and their composition.
    .. [5] C. Dwork, A. Roth. The algorithmic foundations of differential
       privacy. Foundations and Trends in Theoretical Computer Science, 2014:
       group privacy.
    .. [6] S. L. Warner. Randomized response: a survey technique for eliminating
       evasive answer bias. JASA, 1965.
    .. [7] N. Natarajan, I. S. Dhillon, P. Ravikumar, A. Tewari. Learning with
       noisy labels. NeurIPS 2013: the unbiased loss of randomized labels.
    .. [8] A. E. Hoerl, R. W. Kennard. Ridge regression: biased estimation for
       nonorthogonal problems. Technometrics 12, 1970: the ridge that balances
       bias and variance.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn_labeldp.linear_model import DPLogisticRegression
    >>> X, y = make_classification(300, 20, random_state=0)
    >>> clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)
    >>> clf.solver_, clf.coef_.shape, bool(clf.score(X, y) > 0.8), clf.clipped_fraction_
    ('randomized_response', (1, 20), True, 0.5)
    >>> objective = DPLogisticRegression(epsilon=1.0, C=10.0, solver="objective", classes=[0, 1],
    ...                                  random_state=0).fit(X, y)
    >>> objective.mechanism_params_["epsilon_prime"]  # label DP: all of epsilon to the noise
    1.0
    >>> full = DPLogisticRegression(epsilon=1.0, delta=1e-5, solver="newton", privacy="full",
    ...                             C=10.0, data_norm=4.0, classes=[0, 1],
    ...                             random_state=0).fit(X, y)
    >>> full.epsilon_, round(full.example_epsilon_, 2)  # label change (charged), add/remove
    (1.0, 1.47)
    """

    _parameter_constraints: dict = {
        **_BasePrivateERM._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="left")],
        "solver": [StrOptions({"auto", "randomized_response", "objective", "output", "newton",
                               "fc", "sgd", "adam"})],
        "n_noisy_steps": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "learning_rate": [Interval(Real, 0, None, closed="neither"), None],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=0.0,
        C="auto",
        data_norm="auto",
        solver="auto",
        privacy="label",
        fit_intercept=True,
        max_iter=1000,
        tol=1e-6,
        n_noisy_steps="auto",
        batch_size=None,
        learning_rate=None,
        max_grad_norm=None,
        classes=None,
        random_state=None,
        accountant=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.C = C
        self.data_norm = data_norm
        self.solver = solver
        self.privacy = privacy
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.n_noisy_steps = n_noisy_steps
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.max_grad_norm = max_grad_norm
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant

    _dask_solvers = frozenset({"newton", "fc"})

    @property
    def _delta(self):
        return self.delta

    def _loss(self):
        return LogisticLoss()

    def _setting(self, n_samples, n_classes, C, n_noisy_steps=None):
        return replace(
            super()._setting(n_samples, n_classes, C), n_noisy_steps=n_noisy_steps,
            batch_size=self.batch_size, learning_rate=self.learning_rate,
            max_grad_norm=self.max_grad_norm,
        )

    def predict_proba(self, X):
        """Class probabilities: the sigmoid of the scores, normalised over classes for K > 2.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples, n_classes)
            Lazy, chunked like ``X`` along rows, for a dask ``X``.
        """
        scores = self.decision_function(X)
        if not is_dask(scores):
            return logistic_probabilities(scores)
        return scores.map_blocks(
            logistic_probabilities, new_axis=[1] if scores.ndim == 1 else None,
            chunks=(scores.chunks[0], (self.classes_.size,)), dtype=np.float64,
        )

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or dask.array.Array of shape (n_samples, n_classes)
        """
        return np.log(self.predict_proba(X))


class DPLinearSVC(_BasePrivateERM):
    """Linear SVM (Huber hinge loss) with label DP (or full DP) by private ERM.

    Minimises ``J(f) = (1/n) sum_i l(y_i f.z_i) + (Lambda/2) ||f||^2`` with the
    Huber hinge ``l`` of width ``h = huber_width``: ``0`` for ``m > 1 + h``,
    ``(1 + h - m)^2 / (4h)`` for ``|1 - m| <= h`` and ``1 - m`` below, so that
    ``|l'| <= 1`` and ``l'' <= c = 1 / (2h)`` (Chaudhuri et al. 2011, eq. 7).
    The rows ``z`` are the features clipped to ``data_norm`` and divided by it,
    with ``fit_intercept`` extended by a constant 1 and divided by
    ``sqrt(2)``, so that ``||z|| <= 1``; ``Lambda = 1 / (2 C n)`` (``1 / (C
    n)`` without intercept), the penalty ``||w||^2 / (2 C n)`` of
    scikit-learn's ``C`` on the coefficients of ``[x / data_norm, 1]``, the
    intercept included. ``coef_`` and ``intercept_`` are reported on the raw
    features. With ``K > 2`` classes, one-vs-rest.

    Every solver is pure epsilon-DP and calibrated from public quantities
    only (``mechanism_params_``). ``"auto"`` (the default) and
    ``"randomized_response"`` are :class:`DPLogisticRegression`'s: the labels
    randomized once by K-ary randomized response (Warner 1965) where that
    inflates a label's variance by at most 10 and at most 1,000 labels are
    expected to change (``n (1 - p) <= 1000``), then the Huber hinge fitted
    on them as they are (its curvature is not even, so the unbiased loss of
    Natarajan et al. 2013 would not be convex: a bias that more rows do not
    remove, hence the cap), with the same ``C="auto"``; otherwise objective
    perturbation. For objective and output perturbation
    (Chaudhuri et al. 2011), the Huber
    hinge's ``l''`` is not even, so a label flip changes the loss Hessian by a
    rank-one matrix (``r = 1``, against ``r = 2`` for a whole example) and one
    example's gradient by up to ``g = 2`` (as for a whole example):

    - ``"objective"``: ``b`` with density proportional to
      ``exp(-(eps'/g) ||b||)`` and the exact minimiser of ``J(f) + b.f / n +
      (Delta/2) ||f||^2``, with ``eps' = eps - r log(1 + c / (n (Lambda +
      Delta)))``: ``Delta = 0`` when that is at least ``eps / 2``, otherwise the
      extra regularisation ``Delta`` for which it is ``eps / 2`` (an amendment
      of the paper's rule that is equally private and never keeps less);
    - ``"output"``: the exact minimiser of ``J`` plus ``b`` with density
      proportional to ``exp(-(n Lambda eps / g) ||b||)``.

    With ``K > 2`` classes a label change alters 2 of the K binary problems,
    which run with ``epsilon / 2`` each under either ``privacy``. Both
    guarantees hold for the exact minimiser only: L-BFGS runs until the
    gradient norm is at most ``tol``, and
    :class:`~sklearn_labeldp.exceptions.ReleaseError` is raised (no model,
    the budget already charged; a fixed message that names ``tol`` and
    ``max_iter`` only) when ``max_iter`` iterations do not get there, itself a
    rare label-dependent event.

    ``data_norm="auto"`` (the default) is the median of the row norms of the
    training ``X`` (about half of the rows clipped): free under label DP, where
    ``clipped_fraction_`` reports the share of rows clipped (a given bound that
    clips more than half warns with a
    :class:`~sklearn_labeldp.linear_model.RowClippingWarning`); under
    ``privacy="full"`` it reads the private features and warns with a
    :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`: pass a public
    bound there.

    Parameters
    ----------
    epsilon : float, default=1.0
        Pure epsilon-DP (``delta_ = 0``).
    C : float or "auto", default="auto"
        Inverse regularisation strength, scikit-learn's: ``Lambda = 1 / (2 C
        n)`` on the mapped rows, ``1 / (C n)`` without intercept. ``"auto"``
        (``C_``), with ``nu = d g / (n eps_problem)``: ``Lambda = nu`` (output);
        objective ``nu / sqrt(d)``, or ``min(nu, 2 / K) / (1 - h)`` once ``nu
        > 1 / K`` (``huber_objective_regularization``); randomized response
        ``Lambda = min(d, 9) (rho - 1) / (27 n) + 1 / (200 n)`` as for
        :class:`DPLogisticRegression`.
    huber_width : float, default=0.5
        ``h`` > 0.
    data_norm : float or "auto", default="auto"
        Bound on the L2 row norms; rows above it are clipped to it. ``"auto"``:
        the median of the row norms of the training ``X``, which clips about
        half of the rows (the largest row norm if that median is 0, 1 if every
        row is zero).
    solver : {"auto", "randomized_response", "objective", "output"}, default="auto"
        ``"auto"`` is resolved from public quantities and reported as
        ``solver_`` (see above).
    privacy : {"label", "full"}, default="label"
        ``"label"``: neighbouring datasets differ in one label; ``"full"``:
        substitution of one whole example: the same label-change calibration,
        its whole-example guarantee reported as ``example_epsilon_``.
    fit_intercept : bool, default=True
        Fit an intercept as a constant feature inside the norm bound (it is
        regularised).
    max_iter : int, default=1000
        L-BFGS iterations allowed to the exact minimiser.
    tol : float, default=1e-6
        Gradient-norm tolerance of the exact minimiser.
    classes : array-like, default=None
        All possible labels; ``None`` infers them from ``y`` and emits a
        :class:`~sklearn_labeldp.exceptions.PrivacyLeakWarning`.
    random_state : None, "secure", int, numpy.random.Generator or RandomState, default=None
        Randomness of the mechanism: fresh entropy for every fit with
        ``None`` or ``"secure"``, nothing of it kept; an int or generator is
        a replay key, and pickling a model fitted with one warns (see
        :ref:`randomness`).
    accountant : BudgetAccountant, default=None
        Charged with epsilon (label DP) before any label is used.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    mechanism_params_ : dict
        The calibrated parameters of the mechanism, all public:
        ``n_problems``, ``release_epsilon``, ``regularization``
        (``Lambda``), ``gradient_sensitivity`` (``g``) and ``noise_scale`` (the
        noise ``b`` has density proportional to ``exp(-||b|| /
        noise_scale)``), plus for ``"objective"`` ``hessian_rank`` (``r``),
        ``curvature_bound`` (``c``), ``epsilon_prime`` (``eps'``) and
        ``extra_regularization`` (``Delta``).
    solver_ : str
        The solver used: ``solver``, or the one ``"auto"`` resolved to.
    C_ : float
        The ``C`` used (``"auto"`` resolved); also ``mechanism_params_["C"]``.
    data_norm_ : float
        The row-norm bound used (``data_norm``, or for ``"auto"`` the median
        of the row norms).
    clipped_fraction_ : float
        Label DP only: the share of training rows of norm above ``data_norm_``
        (by more than rounding), which were clipped. Not set under
        ``privacy="full"``.
    epsilon_ : float
        Label-DP epsilon (``epsilon``).
    delta_ : float
        0.
    example_epsilon_ : float
        ``privacy="full"`` only: epsilon for substituting a whole example
        (``perturbation_example_epsilon``: about ``K epsilon / 2`` for K > 2).
    example_delta_ : float
        ``privacy="full"`` only: 0.
    privacy_spend_ : PrivacySpend
        A leaf at ``(epsilon_, 0)``; under full DP its params add
        ``example_epsilon`` and ``example_delta``.
    n_features_in_ : int

    See Also
    --------
    DPLogisticRegression : The same private ERM with the logistic loss.
    NormalizedRandomFourierFeatures : A public feature map for a private kernel SVM.

    References
    ----------
    .. [1] K. Chaudhuri, C. Monteleoni, A. D. Sarwate. Differentially private
       empirical risk minimization. JMLR 12, 2011.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn_labeldp.linear_model import DPLinearSVC
    >>> X, y = make_classification(2000, 5, random_state=0)
    >>> clf = DPLinearSVC(epsilon=1.0, C=10.0, solver="objective", classes=[0, 1],
    ...                   random_state=0).fit(X, y)
    >>> clf.coef_.shape, bool(clf.score(X, y) > 0.8)
    ((1, 5), True)
    >>> clf.mechanism_params_["hessian_rank"]  # a label flip: a rank-one Hessian change
    1
    """

    _parameter_constraints: dict = {
        **_BasePrivateERM._parameter_constraints,
        "huber_width": [Interval(Real, 0, None, closed="neither")],
        "solver": [StrOptions({"auto", "randomized_response", "objective", "output"})],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        C="auto",
        huber_width=0.5,
        data_norm="auto",
        solver="auto",
        privacy="label",
        fit_intercept=True,
        max_iter=1000,
        tol=1e-6,
        classes=None,
        random_state=None,
        accountant=None,
    ):
        self.epsilon = epsilon
        self.C = C
        self.huber_width = huber_width
        self.data_norm = data_norm
        self.solver = solver
        self.privacy = privacy
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant

    def _loss(self):
        return HuberHingeLoss(self.huber_width)
