"""Networks used in the label-DP papers, taking flat feature rows.

The meta-estimators validate ``X`` as a 2-D array, so every network here takes
inputs of shape ``(batch, n_features)`` and reshapes them to images itself; an
input that already has the image shape is accepted as well.
"""

import torch
from torch import nn

from ..utils import check_int
from ._augment import check_image_shape

__all__ = ["MLP", "FashionCNN", "PreActResNet18"]


class MLP(nn.Module):
    """Fully connected network for flat feature vectors.

    ``hidden_units`` ReLU layers, then a linear layer of ``n_outputs`` logits.
    The first layer infers its input width on the first forward pass
    (:class:`torch.nn.LazyLinear`), so one class serves any number of features.
    It has no normalisation layer, so Opacus computes its per-sample gradients
    (DP-SGD).

    Parameters
    ----------
    n_outputs : int, default=2
        Number of logits.
    hidden_units : tuple of int, default=(64,)
        Width of each hidden layer; ``()`` gives a linear model (logistic
        regression with the cross-entropy loss).

    Examples
    --------
    >>> import torch
    >>> from sklearn_labeldp.nn import MLP
    >>> MLP(n_outputs=3, hidden_units=(16, 16))(torch.zeros(4, 5)).shape
    torch.Size([4, 3])
    """

    def __init__(self, n_outputs=2, hidden_units=(64,)):
        super().__init__()
        n_outputs = check_int(n_outputs, "n_outputs", minimum=1)
        widths = [
            check_int(width, f"hidden_units[{i}]", minimum=1)
            for i, width in enumerate(hidden_units)
        ]
        layers = []
        for width in widths:
            layers += [nn.LazyLinear(width), nn.ReLU()]
        layers.append(nn.LazyLinear(n_outputs))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x.flatten(1))


class FashionCNN(nn.Module):
    """Small convolutional network for 28x28 grey-scale images (MNIST, Fashion-MNIST).

    The network of the experiments of Zhao et al. (2024, Section 5.2): "two
    convolution and pooling layers with dropout". Exactly::

        conv 3x3, 32 channels, padding 1 -> ReLU -> max-pool 2x2
        conv 3x3, 64 channels, padding 1 -> ReLU -> max-pool 2x2
        dropout(p) -> linear(64 * H/4 * W/4, 128) -> ReLU -> dropout(p) -> linear(128, n_outputs)

    The 3x3 kernels are padded so the two poolings reduce 28x28 to 7x7 (any
    height and width work; odd sizes are floored by the pooling).

    Parameters
    ----------
    n_outputs : int, default=10
        Number of logits (classes, or bit columns for the vector approximation).
    input_shape : tuple of int, default=(1, 28, 28)
        ``(channels, height, width)`` each flat input row is reshaped to.
    dropout : float, default=0.5
        Dropout probability before each linear layer.

    References
    ----------
    .. [1] Zhao, P., Fan, R., Wu, H., Li, Q., Wu, J. and Liu, Z. "Enhancing
       learning with label differential privacy by vector approximation",
       arXiv:2405.15150, 2024 (ICLR 2025), Section 5.2.

    Examples
    --------
    >>> import torch
    >>> from sklearn_labeldp.nn import FashionCNN
    >>> FashionCNN(n_outputs=10)(torch.zeros(4, 784)).shape
    torch.Size([4, 10])
    """

    def __init__(self, n_outputs=10, input_shape=(1, 28, 28), dropout=0.5):
        super().__init__()
        self.input_shape = check_image_shape(input_shape, "input_shape")
        n_outputs = check_int(n_outputs, "n_outputs", minimum=1)
        channels, height, width = self.input_shape
        self.features = nn.Sequential(
            nn.Conv2d(channels, 32, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
        )
        flat = 64 * (height // 4) * (width // 4)
        if flat == 0:
            raise ValueError(f"input_shape {input_shape!r} is too small for two 2x2 poolings.")
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Dropout(dropout),
            nn.Linear(flat, 128),
            nn.ReLU(inplace=True),
            nn.Dropout(dropout),
            nn.Linear(128, n_outputs),
        )

    def forward(self, x):
        x = x.reshape(x.shape[0], *self.input_shape)
        return self.classifier(self.features(x))


class PreActBlock(nn.Module):
    """Pre-activation basic block: BN-ReLU-conv3x3-BN-ReLU-conv3x3 plus identity.

    The shortcut is a strided 1x1 convolution of the pre-activated input when
    the shape changes, as in He et al.'s v2 ResNets.
    """

    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        # Definition order is the execution order: the block opens with BN.
        self.bn1 = nn.BatchNorm2d(in_channels)
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, stride=1, padding=1, bias=False)
        self.shortcut = None
        if stride != 1 or in_channels != out_channels:
            self.shortcut = nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False)

    def forward(self, x):
        out = torch.relu(self.bn1(x))
        # The projection sees the normalised input (v2), the identity the raw one.
        residual = x if self.shortcut is None else self.shortcut(out)
        out = self.conv1(out)
        out = self.conv2(torch.relu(self.bn2(out)))
        return out + residual


class PreActResNet18(nn.Module):
    """Pre-activation ResNet-18 for 32x32 images (CIFAR-10/100).

    A 3x3 stride-1 stem convolution (no max-pool, as is usual for 32x32
    inputs), four stages of two :class:`PreActBlock` each with 64, 128, 256 and
    512 channels (stride 2 at the start of the last three stages), a final
    BatchNorm-ReLU, global average pooling and a linear layer.

    Parameters
    ----------
    n_outputs : int, default=10
        Number of logits.
    input_shape : tuple of int, default=(3, 32, 32)
        ``(channels, height, width)`` each flat input row is reshaped to.

    References
    ----------
    .. [1] He, K., Zhang, X., Ren, S. and Sun, J. "Identity mappings in deep
       residual networks", ECCV 2016.
    .. [2] Zhao, P., Fan, R., Wu, H., Li, Q., Wu, J. and Liu, Z. "Enhancing
       learning with label differential privacy by vector approximation",
       arXiv:2405.15150, 2024 (ICLR 2025), Section 5.2 (ResNet-18 on CIFAR).

    Examples
    --------
    >>> import torch
    >>> from sklearn_labeldp.nn import PreActResNet18
    >>> net = PreActResNet18(n_outputs=5, input_shape=(3, 8, 8)).eval()
    >>> net(torch.zeros(2, 3 * 8 * 8)).shape
    torch.Size([2, 5])
    """

    def __init__(self, n_outputs=10, input_shape=(3, 32, 32)):
        super().__init__()
        self.input_shape = check_image_shape(input_shape, "input_shape")
        n_outputs = check_int(n_outputs, "n_outputs", minimum=1)
        self.stem = nn.Conv2d(self.input_shape[0], 64, 3, stride=1, padding=1, bias=False)
        stages = []
        in_channels = 64
        for out_channels, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
            stages.append(
                nn.Sequential(
                    PreActBlock(in_channels, out_channels, stride),
                    PreActBlock(out_channels, out_channels, 1),
                )
            )
            in_channels = out_channels
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.bn = nn.BatchNorm2d(512)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.linear = nn.Linear(512, n_outputs)
        self._init_weights()

    def _init_weights(self):
        # He initialisation suits the ReLU convolutions; the last linear layer
        # keeps PyTorch's default, which starts the logits near zero.
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)

    def forward(self, x):
        x = x.reshape(x.shape[0], *self.input_shape)
        out = self.stem(x)
        out = self.layer4(self.layer3(self.layer2(self.layer1(out))))
        out = torch.relu(self.bn(out))
        return self.linear(torch.flatten(self.pool(out), 1))
