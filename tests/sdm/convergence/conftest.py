"""Shared fixtures of the tests of assocmem.sdm.convergence: 128 random patterns at ``n = 64``
and a small run of the convergence experiment (three rules, two radii, two levels).
"""

import pytest

from assocmem.sdm.convergence.experiment import convergence_experiment
from assocmem.sdm.convergence.perturbations import random_patterns


@pytest.fixture(scope="module")
def patterns64():
    return random_patterns(128, 64, seed=3)


@pytest.fixture(scope="module")
def small_run():
    return convergence_experiment(64, 128, radii=[5, 11], algorithms=["Binary_SDM", "Binary_SDM_NeuronLimit",
                                                                      "Cont_SDM_BFit_Attention"],
                                  levels=[0, 12], num_queries=16, seed=0, show_progress=False)
