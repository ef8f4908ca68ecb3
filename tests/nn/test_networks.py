"""Shapes and architecture of the networks in sklearn_labeldp.nn."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from torch import nn  # noqa: E402

from sklearn_labeldp.nn import FashionCNN, PreActBlock, PreActResNet18  # noqa: E402


@pytest.mark.parametrize("n_outputs", [10, 3])
def test_fashion_cnn_flat_inputs(n_outputs):
    net = FashionCNN(n_outputs=n_outputs).eval()
    flat = torch.randn(5, 784)
    out = net(flat)
    assert out.shape == (5, n_outputs)
    # Image-shaped inputs give the same logits as their flat rows.
    torch.testing.assert_close(net(flat.reshape(5, 1, 28, 28)), out)


def test_fashion_cnn_architecture():
    net = FashionCNN(dropout=0.3)
    layers = list(net.modules())
    convs = [m for m in layers if isinstance(m, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size) for c in convs] == [
        (1, 32, (3, 3)),
        (32, 64, (3, 3)),
    ]
    assert sum(isinstance(m, nn.MaxPool2d) for m in layers) == 2
    assert [m.p for m in layers if isinstance(m, nn.Dropout)] == [0.3, 0.3]
    linears = [m for m in layers if isinstance(m, nn.Linear)]
    assert [(lin.in_features, lin.out_features) for lin in linears] == [
        (64 * 7 * 7, 128),
        (128, 10),
    ]


def test_fashion_cnn_other_input_shape_and_bad_arguments():
    net = FashionCNN(n_outputs=4, input_shape=(3, 8, 8)).eval()
    assert net(torch.randn(2, 3 * 64)).shape == (2, 4)
    with pytest.raises(ValueError, match="input_shape"):
        FashionCNN(input_shape=(28, 28))
    with pytest.raises(ValueError, match="too small"):
        FashionCNN(input_shape=(1, 3, 3))
    with pytest.raises(ValueError, match="n_outputs"):
        FashionCNN(n_outputs=0)


def test_preact_resnet18_output_shape_for_flat_inputs():
    net = PreActResNet18(n_outputs=7, input_shape=(3, 8, 8))
    assert net(torch.randn(4, 3 * 8 * 8)).shape == (4, 7)  # train mode
    assert net.eval()(torch.randn(1, 192)).shape == (1, 7)


def test_preact_resnet18_architecture():
    net = PreActResNet18()
    layers = list(net.modules())
    # 3x3, stride-1 stem and no max-pool: the CIFAR variant.
    assert net.stem.kernel_size == (3, 3) and net.stem.stride == (1, 1)
    assert net.stem.in_channels == 3 and net.stem.out_channels == 64
    assert not any(isinstance(m, (nn.MaxPool2d, nn.AdaptiveMaxPool2d)) for m in layers)
    blocks = [m for m in layers if isinstance(m, PreActBlock)]
    assert len(blocks) == 8  # [2, 2, 2, 2]
    assert [b.conv2.out_channels for b in blocks] == [64, 64, 128, 128, 256, 256, 512, 512]
    strides = [b.conv1.stride[0] for b in blocks]
    assert strides == [1, 1, 2, 1, 2, 1, 2, 1]
    for block in blocks:
        assert isinstance(next(iter(block.children())), nn.BatchNorm2d)
    # Final BN before the pooling and the linear head.
    assert isinstance(net.bn, nn.BatchNorm2d) and net.bn.num_features == 512
    assert net.linear.in_features == 512 and net.linear.out_features == 10
    # The usual ResNet-18 size (11.2M parameters with 10 classes).
    assert 11.0e6 < sum(p.numel() for p in net.parameters()) < 11.3e6


def test_preact_blocks_run_batchnorm_first_and_end_without_activation():
    block = PreActBlock(8, 16, stride=2)
    calls = []
    for name, module in block.named_children():
        module.register_forward_hook(lambda m, i, o, name=name: calls.append(name))
    out = block(torch.randn(4, 8, 6, 6))
    assert calls[0] == "bn1"
    assert calls.index("bn1") < calls.index("conv1") < calls.index("bn2") < calls.index("conv2")
    assert out.shape == (4, 16, 3, 3)
    # Pre-activation blocks add the residual after the last conv: no final ReLU.
    assert (out < 0).any()
