import importlib.util

import pytest

if importlib.util.find_spec("torch") is not None:
    import torch

    @pytest.fixture(autouse=True, scope="module")
    def one_torch_thread():
        # Tiny networks gain nothing from intra-op threads, and with pytest-xdist
        # workers on 2 cores extra threads only oversubscribe the machine.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        yield
        torch.set_num_threads(threads)
