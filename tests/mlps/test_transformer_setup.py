"""What the SSFR Transformer sweeps share (assocmem.mlps.transformer_setup): the training
fields' checks, the seed streams, the configs of one training and the inserted-MLP draws."""

import dataclasses

import pytest
import torch

from assocmem.mlps import transformer_setup as TSU
from assocmem.mlps.transformer_sweeps import TRANSFORMER_CAPACITY_PRESETS, transformer_capacity_points

CFG = TRANSFORMER_CAPACITY_PRESETS["quick"]


def test_stream_seeds_are_independent_and_prefix_stable():
    seeds = TSU.stream_seeds(12345, 7)
    assert len(set(seeds)) == 7 and all(0 <= s < 2**31 for s in seeds)
    assert TSU.stream_seeds(12345, 6) == seeds[:6]  # asking for more streams moves none
    assert TSU.stream_seeds(12346, 7) != seeds


@pytest.mark.parametrize("seed, n, match", [(1, 0, "n"), (-1, 3, "seed")])
def test_stream_seeds_refuse_bad_input(seed, n, match):
    with pytest.raises(ValueError, match=match):
        TSU.stream_seeds(seed, n)


def test_configs_of_one_training_carry_the_fields():
    t = TSU.train_config(CFG, 7)
    assert (t.steps, t.batch_size, t.lr, t.weight_decay, t.seed) == (CFG.steps, CFG.batch_size, CFG.lr,
                                                                    CFG.weight_decay, 7)
    m = TSU.model_config(CFG, 16, "cpu")
    assert m.d == 16 and m.dtype == TSU.DTYPES[CFG.dtype] == torch.float64


@pytest.mark.parametrize("field, value, error", [
    ("steps", 0, ValueError), ("batch_size", 0, ValueError), ("lr", 0.0, ValueError),
    ("weight_decay", -1.0, ValueError), ("contexts_per_key", 0, ValueError), ("dtype", "float16", ValueError),
])
def test_training_fields_are_checked(field, value, error):
    with pytest.raises(error, match=field if field != "dtype" else "dtype"):
        dataclasses.replace(CFG, **{field: value})  # the configs call check_training_fields


def test_model_config_refuses_an_unknown_dtype():
    class Bad:
        dtype = "int8"

    with pytest.raises(ValueError, match="dtype must be one of"):
        TSU.model_config(Bad(), 8, "cpu")


def test_capacity_setup_is_deterministic_and_shares_the_embeddings():
    point = transformer_capacity_points(CFG)[0]
    a, b = TSU.capacity_setup(CFG, point), TSU.capacity_setup(CFG, point)
    assert torch.equal(a["embedding"], b["embedding"]) and torch.equal(a["map_a"], b["map_a"])
    assert torch.equal(a["facts_a"].keys, a["facts_b"].keys)  # same fact-token rows, two permutations
    assert not torch.equal(a["map_a"], a["map_b"])
    assert a["task"].num_facts == point["F"] and a["embedding"].shape == (a["task"].vocab_size, point["d"])
    seeds = {a[k] for k in ("seed_mlp_a", "seed_mlp_b", "seed_train", "seed_eval")}
    assert len(seeds) == 4


def test_capacity_setup_needs_the_points_size():
    with pytest.raises(KeyError):
        TSU.capacity_setup(CFG, {"method": "whitened", "d": 16, "rep": 0})
