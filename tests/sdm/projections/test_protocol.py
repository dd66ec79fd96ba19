"""Tests for assocmem.sdm.projections.protocol: perturbation levels are the authors' MNIST
cosines.
"""

import numpy as np
import pytest

from assocmem.sdm.projections.protocol import (
    AUTHORS_BASE_DIM,
    AUTHORS_TEST_LEVELS,
    cosine_to_level,
    level_to_cosine,
)


def test_levels_are_the_authors_mnist_cosines():
    assert level_to_cosine(0) == 1.0
    assert level_to_cosine(300) == pytest.approx(1 - 600 / 784)
    assert np.allclose(level_to_cosine(np.array(AUTHORS_TEST_LEVELS)),
                       1 - 2 * np.array(AUTHORS_TEST_LEVELS) / AUTHORS_BASE_DIM)
    assert cosine_to_level(level_to_cosine(123.5)) == pytest.approx(123.5)
    assert level_to_cosine(50, base_dim=1024) == pytest.approx(1 - 100 / 1024)
    with pytest.raises(ValueError, match="levels must lie in"):
        level_to_cosine(785)
    with pytest.raises(ValueError, match="cosines must lie in"):
        cosine_to_level(1.5)
