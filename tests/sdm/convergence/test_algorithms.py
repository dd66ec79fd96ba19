"""Tests for assocmem.sdm.convergence.algorithms: the registry of the App. B.7 rules, name
resolution, and the paper's radii and perturbation levels.
"""

import pytest

from assocmem.sdm.convergence.algorithms import (
    ALGORITHMS,
    ALL_ALGORITHMS,
    Algorithm,
    algorithm_spec,
    paper_radii,
    resolve_algorithm,
)
from assocmem.sdm.convergence.perturbations import perturbation_levels
from assocmem.sdm.convergence.read_rules import make_read_rule

BINARY = [a for a in ALGORITHMS if algorithm_spec(a).space == "binary"]


CONTINUOUS = [a for a in ALGORITHMS if algorithm_spec(a).space == "continuous"]


def test_registry_has_the_eight_paper_algorithms():
    assert ALGORITHMS == ("Binary_SDM", "Binary_SDM_NeuronLimit", "Binary_SDM_BFit_Attention",
                          "Cont_SDM", "Cont_SDM_NeuronLimit", "Cont_Binary_SDM",
                          "Cont_SDM_BFit_Attention", "Cont_SDM_CFit_Attention")
    assert ALL_ALGORITHMS == ALGORITHMS + ("Binary_Neuron_SDM",)
    assert resolve_algorithm("cont_sdm_neuron_limit") == "Cont_SDM_NeuronLimit"
    assert resolve_algorithm(Algorithm.CONT_SDM) == "Cont_SDM"
    assert Algorithm.BINARY_SDM == "Binary_SDM"


def test_unknown_algorithm_lists_valid_names():
    with pytest.raises(ValueError, match="Binary_SDM.*Cont_SDM_CFit_Attention"):
        make_read_rule("Hopfield", 64, 11)
    with pytest.raises(ValueError, match="valid names"):
        resolve_algorithm(3)


def test_paper_radii_and_levels():
    assert paper_radii(64) == [5, 9, 11, 15, 19, 27]
    assert paper_radii(1000) == [384, 405, 411, 431, 447, 480]
    assert perturbation_levels(12) == [0, 2, 4, 6, 8, 10, 12]
    levels = perturbation_levels(375)
    assert levels == [0, 62, 125, 187, 250, 312, 375]
    assert all(type(v) is int for v in levels)
    assert perturbation_levels(3) == [0, 1, 2, 3]  # unique() removes the repeats
    with pytest.raises(ValueError):
        perturbation_levels(-1)
