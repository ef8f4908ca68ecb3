import numpy as np
import pytest

from sklearn_labeldp._private_labels import PrivateLabels


def test_release_passes_labels_to_the_mechanism_once():
    labels = PrivateLabels(np.array([3, 1, 2, 0]), n_classes=4)
    out = labels.release(lambda y, shift: y + shift, [2, 0], shift=10)
    assert out.tolist() == [12, 13]
    with pytest.raises(RuntimeError, match="released twice"):
        labels.release(lambda y: y, [1, 2])
    with pytest.raises(RuntimeError, match="released twice"):
        labels.release(lambda y: y, [1, 1])
    assert labels.release(lambda y: y, [1, 3]).tolist() == [1, 0]
