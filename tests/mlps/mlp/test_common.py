"""Tests for assocmem.mlps.mlp._common: the argument checks and seeded draws shared by every construction."""

import pytest
import torch

from assocmem.mlps.facts import FactSet, make_fact_set
from assocmem.mlps.mlp.data_dependent import data_dependent_mlp
from assocmem.mlps.mlp.gradient_descent import train_mlp
from assocmem.mlps.mlp.hebbian import exact_k2_memory, hebbian_mlp
from assocmem.mlps.mlp.ntk import ntk_mlp


def test_constructions_are_seeded(facts256):
    a, b = hebbian_mlp(facts256, 32, seed=9), hebbian_mlp(facts256, 32, seed=9)
    assert torch.equal(a.A, b.A) and torch.equal(a.B, b.B)
    assert not torch.equal(a.A, hebbian_mlp(facts256, 32, seed=10).A)
    c, e = data_dependent_mlp(facts256, 24, seed=1), data_dependent_mlp(facts256, 24, seed=1)
    assert torch.equal(c.A, e.A) and torch.equal(c.B, e.B)


CONSTRUCTIONS = [
    lambda fs, m: hebbian_mlp(fs, m),
    lambda fs, m: hebbian_mlp(fs, m, "full"),
    lambda fs, m: data_dependent_mlp(fs, m),
    lambda fs, m: ntk_mlp(fs, m),
    lambda fs, m: train_mlp(fs, m, epochs=1, device="cpu"),
]


@pytest.mark.parametrize("build", CONSTRUCTIONS)
@pytest.mark.parametrize("m", [0, -3, 2.5, True])
def test_bad_width_raises(build, m):
    with pytest.raises(ValueError, match="m must be a positive integer"):
        build(make_fact_set(8, 4), m)


@pytest.mark.parametrize("build", CONSTRUCTIONS[:4] + [lambda fs, m: exact_k2_memory(fs)])
def test_keys_off_the_sphere_raise(build):
    fs = make_fact_set(8, 4)
    off = FactSet(1.5 * fs.keys, fs.values, fs.mapping, unit_norm=False)
    with pytest.raises(ValueError, match="unit sphere"):
        build(off, 4)


def test_empty_fact_set_and_bad_map_raise():
    with pytest.raises(ValueError):
        make_fact_set(0, 4)
    fs = make_fact_set(8, 4)
    with pytest.raises(ValueError, match="at least one fact"):
        FactSet(fs.keys[:0], fs.values, fs.mapping[:0])
    with pytest.raises(ValueError, match=r"\[0, V\)"):
        FactSet(fs.keys, fs.values, fs.mapping + 1)
    # a map edited in place after construction is caught by the constructions
    bad = make_fact_set(8, 4)
    bad.mapping[0] = 99
    for build in CONSTRUCTIONS:
        with pytest.raises(ValueError, match=r"\[0, V\)"):
            build(bad, 4)
    with pytest.raises(ValueError, match="FactSet"):
        hebbian_mlp((fs.keys, fs.values, fs.mapping), 4)


def test_other_bad_arguments_raise(facts256):
    with pytest.raises(ValueError, match="whitening"):
        hebbian_mlp(facts256, 8, "zca")
    with pytest.raises(ValueError, match="ridge"):
        hebbian_mlp(facts256, 8, "full", ridge=-1.0)
    with pytest.raises(ValueError, match="branch"):
        hebbian_mlp(facts256, 8, "full", branch="both")
    with pytest.raises(ValueError, match="objective"):
        data_dependent_mlp(facts256, 8, objective="logits")
    with pytest.raises(ValueError, match="loss"):
        train_mlp(facts256, 8, loss="hinge", device="cpu")
    with pytest.raises(ValueError, match="lr"):
        train_mlp(facts256, 8, lr=0.0, device="cpu")
