"""Tests for assocmem._checks: the argument checks shared by the library."""

import numpy as np
import pytest
import torch


def test_as_int_accepts_integers_and_enforces_a_minimum():
    import numpy as np

    from assocmem._checks import as_int
    assert as_int(3, "k") == 3 and as_int(3.0, "k") == 3 and as_int(np.int64(3), "k") == 3
    assert as_int(torch.tensor(3), "k") == 3 and as_int(np.array(3), "k") == 3
    for bad in (True, np.bool_(False), torch.tensor(True), 2.5, float("nan"), "3", None):
        with pytest.raises(ValueError, match="k must be an integer"):
            as_int(bad, "k")
    with pytest.raises(ValueError, match="k must be >= 1, got 0"):
        as_int(0, "k", minimum=1)


def test_lookup_lists_the_valid_names():
    from assocmem._checks import lookup
    table = {"quick": 1, "cpu": 2}
    assert lookup(table, "cpu") == 2
    with pytest.raises(ValueError, match=r"unknown preset 'huge'; valid presets: \['cpu', 'quick'\]"):
        lookup(table, "huge")
    with pytest.raises(ValueError, match="unknown preset"):
        lookup(table, ["unhashable"])


def test_positive_int_and_seed_int():
    import numpy as np

    from assocmem._checks import positive_int, seed_int
    assert positive_int("m", 3) == 3 and positive_int("m", np.int64(2)) == 2 and seed_int(-1) == -1
    for bad in (0, -1, 2.0, True, "3"):
        with pytest.raises(ValueError, match="m must be a positive integer"):
            positive_int("m", bad)
    for bad in (1.0, False, None):
        with pytest.raises(ValueError, match="seed must be an integer"):
            seed_int(bad)


# as_real: the one check behind every real-valued argument

from assocmem._checks import as_real  # noqa: E402


@pytest.mark.parametrize("value,want", [(1, 1.0), (2.5, 2.5), (np.float32(0.5), 0.5), (np.int64(3), 3.0),
                                        (torch.tensor(1.5), 1.5), (np.array(4.0), 4.0)])
def test_as_real_accepts_real_scalars(value, want):
    out = as_real(value, "beta")
    assert out == want and type(out) is float


@pytest.mark.parametrize("value,match", [
    (True, "beta must be a real number"), (np.bool_(False), "beta must be a real number"),
    (torch.tensor(True), "beta must be a real number"), ("1.0", "beta must be a real number"),
    (b"1", "beta must be a real number"), (1j, "beta must be a real number"), (None, "beta must be a real number"),
    ([1.0], "beta must be a real number"), (float("nan"), "beta must be finite"), (float("inf"), "beta must be finite"),
])
def test_as_real_refuses_what_is_not_a_finite_real(value, match):
    with pytest.raises(ValueError, match=match):
        as_real(value, "beta")


def test_as_real_bounds():
    assert as_real(0.0, "ridge", minimum=0) == 0.0
    with pytest.raises(ValueError, match="ridge must be >= 0"):
        as_real(-1e-3, "ridge", minimum=0)
    with pytest.raises(ValueError, match="scale must be > 0"):
        as_real(0, "scale", minimum=0, strict_min=True)
    with pytest.raises(ValueError, match="eps must be <= 2"):
        as_real(3, "eps", maximum=2)
    assert as_real(float("inf"), "limit", finite=False) == float("inf")
    with pytest.raises(ValueError, match="limit must be a number"):
        as_real(float("nan"), "limit", finite=False)


def test_as_real_refuses_integers_beyond_float64():
    with pytest.raises(ValueError, match="beta must be a finite real number"):
        as_real(10**400, "beta")


def test_token_ids_accepts_integer_batches_and_refuses_the_rest():
    import torch

    from assocmem._checks import token_ids

    out = token_ids(torch.tensor([[0, 3], [2, 1]], dtype=torch.int32), 4)
    assert out.dtype == torch.int64 and out.tolist() == [[0, 3], [2, 1]]
    for bad, match in [([[0, 1]], "torch.Tensor"), (torch.zeros(1, 2), "integer tensor"),
                       (torch.zeros(1, 2, dtype=torch.bool), "integer tensor"), (torch.zeros(3, dtype=torch.long), "shape"),
                       (torch.zeros(0, 2, dtype=torch.long), "shape"), (torch.tensor([[0, 4]]), r"\[0, 4\)"),
                       (torch.tensor([[-1, 0]]), "range")]:
        with pytest.raises(ValueError, match=match):
            token_ids(bad, 4)


def test_training_helpers_detect_divergence_and_restore_a_module():
    from assocmem._checks import TrainingDiverged, check_finite_parameters, check_loss, restore_state, state_copy
    layer = torch.nn.Linear(3, 2)
    saved = state_copy(layer)
    with torch.no_grad():
        layer.weight.fill_(float("nan"))
    with pytest.raises(ValueError, match="parameter 'weight' is not finite"):
        check_finite_parameters(layer)
    restore_state(layer, saved)
    assert torch.equal(layer.weight, saved["weight"]) and layer.weight.data_ptr() != saved["weight"].data_ptr()
    check_finite_parameters(layer)
    check_loss(torch.tensor(1.5), 1, what="t", lr=0.1)
    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(TrainingDiverged, match="t diverged: the loss is .* at step 4 .*restored"):
            check_loss(torch.tensor(bad), 4, what="t", lr=0.1)
    assert issubclass(TrainingDiverged, FloatingPointError) and issubclass(TrainingDiverged, ValueError)


def test_the_loss_limit_is_where_the_targets_probability_leaves_the_dtypes_normal_range():
    """A finite blow-up (a loss of 1e15 nats from weights near 1e30) is a divergence; a loss at
    the limit is not."""
    import math

    from assocmem._checks import TrainingDiverged, check_loss, loss_limit
    for dtype in (torch.float32, torch.float64):
        limit = loss_limit(dtype)
        assert math.exp(-limit) == pytest.approx(torch.finfo(dtype).tiny, rel=1e-12)
        check_loss(torch.tensor(limit, dtype=dtype).nextafter(torch.tensor(0.0, dtype=dtype)), 1, what="t", lr=0.1)
        with pytest.raises(TrainingDiverged, match=rf"the loss is .* at step 2, above {limit:.0f} nats .*"
                                                   rf"smallest normal {dtype}\) \(lr = 0.1\).*No model"):
            check_loss(torch.tensor(limit * 1.01, dtype=dtype), 2, what="t", lr=0.1, restored=False)
    assert round(loss_limit(torch.float32), 1) == 87.3 and round(loss_limit(torch.float64), 1) == 708.4
    with pytest.raises(TrainingDiverged, match=r"the loss is 1e\+15 after the last update \(step 7\)"):
        check_loss(torch.tensor(1e15, dtype=torch.float64), 7, what="t", lr=1e15, final=True)
    with pytest.raises(ValueError, match="floating torch dtype"):
        loss_limit(torch.int64)


def test_whole_numbers_and_index_tensor_refuse_what_they_would_round():
    from assocmem._checks import index_tensor, whole_numbers
    assert whole_numbers([1, 2.0], "n").tolist() == [1.0, 2.0]
    assert whole_numbers(torch.tensor([3], dtype=torch.int8), "n").tolist() == [3.0]
    for bad, match in ((True, "a boolean"), ("3", "a boolean or a string"), ([1, "2"], "a string"),
                       (np.array([True]), "dtype bool"), (torch.tensor([False]), "boolean tensor"),
                       (None, "dtype object"), ([1.5], "whole numbers; got 1.5"), ([np.nan], "finite"),
                       ([[1], [1, 2]], "integers"), (np.array([2**60]), "2\\*\\*53")):
        with pytest.raises(ValueError, match=f"n must .*{match}"):
            whole_numbers(bad, "n")
    assert index_tensor([0, 2.0], "i", 3).tolist() == [0, 2] and index_tensor([0], "i", 3).dtype == torch.int64
    with pytest.raises(ValueError, match=r"i must lie in \[0, 3\); got range \[0, 3\]"):
        index_tensor([0, 3], "i", 3)


def test_state_copy_keeps_a_submodules_extra_state():
    """A model holding a memory with extra state (an MLP's construction and info, a matrix memory's
    pair count) is copied and restored whole; the copy is not the module's own record."""
    from assocmem._checks import restore_state, state_copy
    from assocmem.mlps.mlp.architectures import BilinearMLP

    mlp = BilinearMLP(torch.ones(2, 3), torch.ones(2, 3), torch.ones(3, 2), construction="hebbian-none")
    mlp.info = {"seed": 1}
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), mlp)
    saved = state_copy(model)
    assert saved["1._extra_state"] == {"construction": "hebbian-none", "info": {"seed": 1}}
    mlp.info["seed"] = 2
    assert saved["1._extra_state"]["info"] == {"seed": 1}
    restore_state(model, saved)
    assert mlp.info == {"seed": 1}
