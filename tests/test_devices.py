"""Tests for assocmem.devices: device selection and the torch thread context."""

import pytest
import torch

from assocmem.devices import resolve_device


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


@pytest.mark.skipif(torch.cuda.is_available(), reason="only meaningful without CUDA")
def test_a_cuda_torch_device_is_checked_too():
    # before: returned as it was, so the error came later, from deep inside a computation
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        resolve_device(torch.device("cuda"))
    assert resolve_device(torch.device("meta")) == torch.device("meta")  # other explicit types pass through


@pytest.mark.gpu
def test_cuda_indices_are_checked_against_this_machine():
    n = torch.cuda.device_count()
    assert resolve_device("cuda") == torch.device("cuda")
    assert resolve_device(f"cuda:{n - 1}") == torch.device("cuda", n - 1)
    assert resolve_device(torch.device("cuda", 0)) == torch.device("cuda", 0)
    with pytest.raises(RuntimeError, match=f"this machine has {n} CUDA device"):
        resolve_device(f"cuda:{n}")
    with pytest.raises(RuntimeError, match=f"this machine has {n} CUDA device"):
        resolve_device(torch.device("cuda", n))
