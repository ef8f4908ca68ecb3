"""Training settings of DP-SGD's default network, resolved from public quantities.

The rule follows the practitioners' guidance for DP-SGD: at a fixed privacy
budget, larger batches and more epochs help as long as the noise allows them
(Abadi et al. 2016; De et al. 2022), and the learning rate grows linearly
with the batch size (Goyal et al. 2017, carried over to DP-SGD by Ponomareva
et al. 2023, Sec. 5). How much the budget allows has no closed form for a
non-convex network, so the constants were fitted on public data (the digits
and ``make_classification(20000, 20, n_informative=10, n_classes=5)``) and
checked on data they were not fitted on (UCI Adult and 300-row sets of two
and three classes); see the user guide's "Choosing hyperparameters".

At a small epsilon the noise, whose norm grows with the square root of the
number of parameters, swamps a hidden layer: below a crossover the default
network is a linear model (softmax regression), trained with a batch of 256
and the base learning rate (the linear scaling rule overshoots when the
noise dominates the update). The crossover was measured between epsilon 0.5
and 1 on 10,000 Fashion-MNIST images and on the digits, and between 0.2 and
0.5 on the 5-class synthetic set, whose 20 features make a small network.
"""

__all__ = ["default_training", "linear_below"]

# The earlier fixed network, kept up to epsilon = 1: at that noise level no
# larger batch or longer training measured better (synthetic set, eps 1:
# 0.686-0.699 for batches of 256-875 and 20-50 epochs against 0.704).
_BASE_BATCH = 64
_BASE_EPOCHS = 20
_BASE_LR = 0.1
# Capped at epsilon = 8, where 512 rows and 100 epochs gave 0.815 on the synthetic
# set (the same settings without noise 0.887, the earlier fixed network 0.739);
# no larger batch or longer run tried did better than 0.819.
_MAX_SCALE = 8.0
_EPOCHS_PER_EPSILON = 12.5
_MAX_EPOCHS = 100
# At least four steps per epoch: a batch of the whole data would leave a
# small data set only max_epochs noisy steps.
_MIN_STEPS_PER_EPOCH = 4
# The default MLP's hidden layer.
_HIDDEN_UNITS = 64
# Below the crossover: a linear model, batch 256, 20 epochs, the base rate 0.1
# (10,000 Fashion-MNIST images at eps 0.2, validation split: 0.665 against 0.652-
# 0.665 for batches of 64-512 and rates 0.05-0.1, 0.556 at 1.0; the MLP at its best
# setting tried 0.635, at the earlier default 0.455).
_LINEAR_BATCH = 256
_LINEAR_EPOCHS = 20
# Below epsilon 0.2 the linear model's batch grows like 1 / eps^2 (still at most
# n / 4): 10,000 Fashion-MNIST images, validation splits of 3 seeds, at eps 0.05
# 0.311-0.382 at 256 against 0.400-0.479 at 2,500, at eps 0.1 0.513-0.555 against
# 0.555-0.572 at 1,024; on UCI Adult (two classes) level at 0.05 (0.796 both),
# 0.5 points lower at 0.1 (0.839 against 0.834, 2 seeds).
_LINEAR_BATCH_EPSILON = 0.2
# The crossover epsilon, 0.5 (p / n)^(1/4) within [0.25, 1] for the MLP's p
# parameters on n rows: 0.75 on 10,000 Fashion-MNIST images (measured between
# 0.5 and 1), 0.70 on the digits (0.5-1), 0.29 on the synthetic set (0.2-0.5).
_CROSSOVER_SCALE = 0.5
_CROSSOVER_BOUNDS = (0.25, 1.0)


def linear_below(n_samples, n_features, n_classes):
    """The epsilon below which DP-SGD's default network is linear.

    ``0.5 (p / n)^(1/4)`` clipped to ``[0.25, 1]``, with ``p = 64 (d + 1) +
    K 65`` the parameters of the default MLP (one hidden layer of 64) on ``d``
    features and ``K`` classes and ``n`` the training rows: a larger network
    per row pays more noise for its hidden layer (the noise's norm grows with
    the square root of ``p``; its share of each averaged update falls with the
    rows), so it needs a larger budget before the hidden layer pays.

    Parameters
    ----------
    n_samples, n_features, n_classes : int

    Returns
    -------
    float

    Examples
    --------
    >>> from sklearn_labeldp.nn._dp_sgd_defaults import linear_below
    >>> round(linear_below(10_000, 784, 10), 2), round(linear_below(14_000, 20, 5), 2)
    (0.75, 0.29)
    """
    parameters = _HIDDEN_UNITS * (int(n_features) + 1) + int(n_classes) * (_HIDDEN_UNITS + 1)
    crossover = _CROSSOVER_SCALE * (parameters / int(n_samples)) ** 0.25
    return float(min(max(crossover, _CROSSOVER_BOUNDS[0]), _CROSSOVER_BOUNDS[1]))


def default_training(n_samples, epsilon, n_features, n_classes):
    """Network width, batch size, epochs and learning rate of DP-SGD's default network.

    From public quantities only: the number of training rows ``n``, of
    features ``d``, of classes ``K`` and the target ``epsilon``.

    Below :func:`linear_below` (``n``, ``d``, ``K``), a linear model
    (``hidden_units=()``) with ``batch_size = min(256 max(1, (0.2 /
    epsilon)^2), max(64, n // 4))``, 20 epochs and ``lr = 0.1``: at that
    noise a hidden layer costs more than it brings, and so does the linear
    scaling of the learning rate, while a larger batch pays below epsilon
    0.2 (the noise of an averaged step falls with it). Above it,
    the MLP with one hidden layer of 64 and, with ``s = clip(epsilon, 1, 8)``:

    - ``batch_size = min(64 s, max(64, n // 4))``: the expected Poisson
      batch grows with the budget (De et al. 2022: the noise per step,
      ``sigma / batch_size``, falls as the batch grows at a fixed number of
      epochs), capped so that an epoch has at least four steps;
    - ``max_epochs = clip(round(12.5 epsilon), 20, 100)``: more passes when
      the noise is low, the earlier 20 at ``epsilon <= 1.6`` (more epochs at
      ``epsilon = 1`` cost 2 to 6 points on the synthetic set);
    - ``lr = 0.1 batch_size / 64``: the linear scaling rule (Goyal et al.
      2017; Ponomareva et al. 2023, Sec. 5.4), from the earlier 0.1 at 64.

    Parameters
    ----------
    n_samples : int
        Number of training rows.
    epsilon : float
        Target label-DP epsilon of the fit.
    n_features : int
        Number of input features.
    n_classes : int
        Number of classes.

    Returns
    -------
    dict
        ``{"hidden_units": tuple, "batch_size": int, "max_epochs": int, "lr": float}``.

    References
    ----------
    .. [1] M. Abadi et al. Deep learning with differential privacy. CCS 2016.
    .. [2] S. De, L. Berrada, J. Hayes, S. L. Smith, B. Balle. Unlocking
       high-accuracy differentially private image classification through
       scale. arXiv:2204.13650, 2022.
    .. [3] P. Goyal et al. Accurate, large minibatch SGD: training ImageNet
       in 1 hour. arXiv:1706.02677, 2017.
    .. [4] N. Ponomareva et al. How to DP-fy ML: a practical guide to machine
       learning with differential privacy. JAIR 77, 2023.

    Examples
    --------
    >>> from sklearn_labeldp.nn._dp_sgd_defaults import default_training
    >>> default_training(14_000, 1.0, 20, 5)
    {'hidden_units': (64,), 'batch_size': 64, 'max_epochs': 20, 'lr': 0.1}
    >>> default_training(14_000, 8.0, 20, 5)
    {'hidden_units': (64,), 'batch_size': 512, 'max_epochs': 100, 'lr': 0.8}
    >>> default_training(10_000, 0.2, 784, 10)
    {'hidden_units': (), 'batch_size': 256, 'max_epochs': 20, 'lr': 0.1}
    >>> [default_training(10_000, eps, 784, 10)["batch_size"] for eps in (0.1, 0.05)]
    [1024, 2500]
    >>> default_training(300, 8.0, 20, 3)["batch_size"]
    75
    """
    epsilon = float(epsilon)
    # At least four steps per epoch, in either branch.
    cap = max(_BASE_BATCH, int(n_samples) // _MIN_STEPS_PER_EPOCH)
    if epsilon < linear_below(n_samples, n_features, n_classes):
        growth = max(1.0, (_LINEAR_BATCH_EPSILON / epsilon) ** 2)
        return {"hidden_units": (), "batch_size": int(min(round(_LINEAR_BATCH * growth), cap)),
                "max_epochs": _LINEAR_EPOCHS, "lr": _BASE_LR}
    scale = min(max(epsilon, 1.0), _MAX_SCALE)
    batch_size = min(round(_BASE_BATCH * scale), cap)
    max_epochs = min(max(round(_EPOCHS_PER_EPSILON * epsilon), _BASE_EPOCHS), _MAX_EPOCHS)
    lr = _BASE_LR * batch_size / _BASE_BATCH
    return {"hidden_units": (_HIDDEN_UNITS,), "batch_size": int(batch_size),
            "max_epochs": int(max_epochs), "lr": float(lr)}
