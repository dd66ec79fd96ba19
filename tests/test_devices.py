"""Tests for assocmem.devices: device selection and the torch thread context."""

import pytest
import torch

from assocmem.devices import resolve_device


def test_auto_device_is_available_here():
    dev = resolve_device("auto")
    assert dev.type in ("cpu", "cuda", "mps")
    assert resolve_device(None) == torch.get_default_device()
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


@pytest.fixture
def a_mac(monkeypatch):
    """This machine as a Mac: MPS available, no CUDA (the availability checks patched)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)


def test_auto_skips_mps_for_float64(a_mac):
    assert resolve_device("auto") == torch.device("mps")
    assert resolve_device("auto", dtype=torch.float32) == torch.device("mps")
    assert resolve_device("auto", dtype=torch.float64) == torch.device("cpu")
    assert resolve_device(None, dtype=torch.float64) == torch.device("cpu")


def test_mps_by_name_with_float64_is_a_clear_error(a_mac):
    assert resolve_device("mps", dtype=torch.float32) == torch.device("mps")
    for request in ("mps", "mps:0", torch.device("mps")):
        with pytest.raises(ValueError, match=r"cannot compute in torch\.float64 .*dtype=torch\.float32"):
            resolve_device(request, dtype=torch.float64)
    # a dtype that is not a torch.dtype (a name a memory also takes) is the caller's to check
    assert resolve_device("cpu", dtype="float64") == torch.device("cpu")


def test_float64_memories_and_fact_sets_pass_their_dtype(a_mac):
    """The float64 constructors ask for their dtype's device: "auto" on a Mac is the CPU for them."""
    from assocmem.compare.adapters import MatrixAdapter
    from assocmem.linear.memory import OuterProductMemory
    from assocmem.mlps.facts import make_fact_set

    assert MatrixAdapter(2, 2, device="auto").device == torch.device("cpu")
    assert OuterProductMemory(2, 2, device="auto").device == torch.device("cpu")
    assert make_fact_set(3, 2, device="auto").keys.device == torch.device("cpu")


def test_only_cpu_generators_are_accepted():
    from assocmem.devices import check_cpu_generator

    gen = torch.Generator()
    assert check_cpu_generator(gen) is gen
    with pytest.raises(ValueError, match="must be a torch.Generator"):
        check_cpu_generator(3)
    with pytest.raises(ValueError, match=r"seed is a torch.Generator on cuda:0; random draws happen on the CPU"):
        check_cpu_generator(CudaGenerator())


class CudaGenerator(torch.Generator):
    """Stands for a CUDA generator on a machine without one: reports cuda:0 as its device."""

    @property
    def device(self):
        return torch.device("cuda", 0)
