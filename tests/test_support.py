"""The small support modules: device selection, quiet progress bars, the house style."""

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

from assocmem.devices import resolve_device
from assocmem.plotting import PALETTE, color, key_value_planes, use_style
from assocmem.progress import progress, quiet


def test_auto_device_is_available_here():
    dev = resolve_device("auto")
    assert dev.type in ("cpu", "cuda", "mps")
    assert resolve_device(None) == dev
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")


def test_unknown_device_is_rejected():
    with pytest.raises(ValueError, match="unknown device"):
        resolve_device("tpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="only meaningful without CUDA")
def test_missing_cuda_is_a_clear_error():
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        resolve_device("cuda")


def test_progress_is_silent_when_quiet(monkeypatch):
    monkeypatch.setenv("ASSOCMEM_QUIET", "1")
    assert quiet()
    assert list(progress(range(3))) == [0, 1, 2]
    monkeypatch.delenv("ASSOCMEM_QUIET")
    monkeypatch.delenv("CI", raising=False)
    assert not quiet()


def test_palette_and_style():
    use_style()
    assert color(0) == PALETTE["blue"] and color("green") == PALETTE["green"]
    with pytest.raises(ValueError, match="unknown colour"):
        color("magenta")
    fig, (a, b) = key_value_planes()
    assert a.get_aspect() == b.get_aspect() == 1.0


def test_torch_threads_sets_and_restores():
    import torch

    from assocmem.devices import torch_threads
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="num_threads"):
            with torch_threads(bad):
                pass


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
