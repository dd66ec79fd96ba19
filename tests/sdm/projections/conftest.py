"""Shared fixtures of the tests of assocmem.sdm.projections: one CPU thread throughout, the
digits as the presets use them, and one projection trained on them for 20 epochs (about a second;
trained once per test module that uses it).
"""

import pytest
import torch

from assocmem.sdm.projections.presets import digits_images
from assocmem.sdm.projections.training import train_projection


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(saved)


@pytest.fixture(scope="module")
def digits():
    return digits_images(seed=0)


@pytest.fixture(scope="module")
def trained(digits):
    train, _ = digits
    return train_projection(train, 64, d=11, epochs=20, seed=0, device="cpu")
