"""The associative-memory protocol of the shared floor: checks, decoding, counting conventions."""

import math

import pytest
import torch

from assocmem.memory_protocol import (
    AssociativeMemory,
    MemoryNotWrittenError,
    as_pairs,
    as_queries,
    decode,
    storage_bits,
)


class Table(AssociativeMemory):
    """A lookup table: the smallest honest memory (returns the value of the nearest key)."""

    name = "table"

    def __init__(self, d_k, d_v, **kw):
        super().__init__(d_k, d_v, **kw)
        self._reset()

    def _write(self, keys, values):
        self.keys = torch.cat([self.keys, keys])
        self.values = torch.cat([self.values, values])

    def _read(self, queries):
        return self.values[(queries @ self.keys.T).argmax(dim=1)]

    def _reset(self):
        self.keys = torch.zeros(0, self.d_k, dtype=self.dtype, device=self.device)
        self.values = torch.zeros(0, self.d_v, dtype=self.dtype, device=self.device)

    @property
    def num_parameters(self):
        return self.keys.shape[0] * (self.d_k + self.d_v)


class Broken(Table):
    def _read(self, queries):
        return torch.full((queries.shape[0], self.d_v + 1), 1.0, dtype=self.dtype)


class NaNs(Table):
    def _read(self, queries):
        return torch.full((queries.shape[0], self.d_v), math.nan, dtype=self.dtype)


def test_write_read_shapes_and_counts():
    mem = Table(3, 2)
    keys, values = torch.eye(3), torch.tensor([[1.0, 0], [0, 1], [1, 1]])
    assert mem.write(keys, values) is mem
    assert mem.num_pairs == 3 and mem.num_parameters == 15 and mem.num_bits == 15 * 64
    assert mem.bits_per_parameter() == 64.0
    out = mem.read(keys)
    assert out.shape == (3, 2) and out.dtype == torch.float64 and torch.equal(out, values)
    assert mem.read(keys[0]).shape == (2,)
    assert mem.read(keys.reshape(1, 3, 3)).shape == (1, 3, 2)
    assert mem.read(torch.zeros(0, 3)).shape == (0, 2)
    mem.write(keys[:1], values[:1])
    assert mem.num_pairs == 4


def test_float32_memory_casts_inputs_and_outputs():
    mem = Table(2, 2, dtype=torch.float32).write(torch.eye(2, dtype=torch.float64), torch.eye(2))
    assert mem.keys.dtype == torch.float32 and mem.read(torch.eye(2)).dtype == torch.float32
    assert storage_bits(torch.float32) == 32 and mem.num_bits == 8 * 32


def test_read_before_write_and_after_reset():
    mem = Table(2, 2)
    with pytest.raises(MemoryNotWrittenError, match="call write"):
        mem.read(torch.eye(2))
    mem.write(torch.eye(2), torch.eye(2)).reset()
    assert mem.num_pairs == 0
    with pytest.raises(MemoryNotWrittenError):
        mem.read(torch.eye(2))


@pytest.mark.parametrize("keys, values, match", [
    (torch.ones(3), torch.ones(3, 2), "must be 2-D"),
    (torch.ones(3, 4), torch.ones(3, 2), "d_k = 3 columns"),
    (torch.ones(3, 3), torch.ones(3, 5), "d_v = 2 columns"),
    (torch.ones(3, 3), torch.ones(2, 2), "same number of rows"),
    (torch.ones(0, 3), torch.ones(0, 2), "at least one pair"),
    (torch.tensor([[1.0, math.nan, 0]]), torch.ones(1, 2), "keys contain non-finite"),
    (torch.ones(1, 3), torch.tensor([[math.inf, 0.0]]), "values contain non-finite"),
    (torch.ones(1, 3, dtype=torch.float16), torch.ones(1, 2), "float16"),
    (torch.ones(1, 3, dtype=torch.complex64), torch.ones(1, 2), "real numbers"),
    (torch.ones(1, 3, dtype=torch.bool), torch.ones(1, 2), "real numbers"),
    ("abc", torch.ones(1, 2), "real tensor"),
    (torch.full((1, 3), 1e300, dtype=torch.float64), torch.ones(1, 2), "overflows torch.float32"),
])
def test_bad_pairs(keys, values, match):
    mem = Table(3, 2, dtype=torch.float32 if "overflow" in match else torch.float64)
    with pytest.raises(ValueError, match=match):
        mem.write(keys, values)
    assert mem.num_pairs == 0


@pytest.mark.parametrize("queries, match", [
    (torch.ones(2, 4), "d_k = 3"),
    (torch.tensor(1.0), "d_k = 3"),
    (torch.tensor([[math.nan, 0, 0]]), "non-finite"),
    (torch.ones(1, 3, dtype=torch.bfloat16), "bfloat16"),
])
def test_bad_queries(queries, match):
    mem = Table(3, 2).write(torch.eye(3), torch.ones(3, 2))
    with pytest.raises(ValueError, match=match):
        mem.read(queries)


def test_adapter_bugs_are_not_returned_silently():
    for cls, match in ((Broken, "returned shape"), (NaNs, "non-finite")):
        mem = cls(2, 2).write(torch.eye(2), torch.eye(2))
        with pytest.raises(RuntimeError, match=match):
            mem.read(torch.eye(2))


@pytest.mark.parametrize("d_k, d_v, dtype, match", [
    (0, 2, torch.float64, "d_k"), (2, -1, torch.float64, "d_v"), (2.5, 2, torch.float64, "d_k"),
    (2, 2, torch.float16, "float16"), (2, 2, torch.int64, "float32 or torch.float64"), (2, 2, "float64", "dtype"),
])
def test_bad_construction(d_k, d_v, dtype, match):
    with pytest.raises(ValueError, match=match):
        Table(d_k, d_v, dtype=dtype)


def test_abstract_base_cannot_be_built():
    with pytest.raises(TypeError):
        AssociativeMemory(2, 2)


def test_a_memory_must_say_how_it_forgets():
    """Without ``_reset`` a memory would keep its pairs through reset(): it cannot be built."""

    class Forgetful(AssociativeMemory):
        def _write(self, keys, values):
            self.kept = values

        def _read(self, queries):
            return self.kept[: queries.shape[0]]

        @property
        def num_parameters(self):
            return 0

    with pytest.raises(TypeError, match="_reset"):
        Forgetful(2, 2)
    mem = Table(3, 2).write(torch.eye(3), torch.ones(3, 2))
    assert mem.reset().num_pairs == 0 and mem.keys.shape == (0, 3)  # an honest reset empties the table


def test_decode_is_the_strict_argmax():
    values = torch.eye(3)
    out = torch.tensor([[2.0, 1, 0], [0, 0, 0], [1, 1, 0.5], [0, 0.1, 3]])
    assert decode(out, values).tolist() == [0, -1, -1, 2]  # a zero output and a tie decode to no row


@pytest.mark.parametrize("outputs, values, match", [
    (torch.ones(2, 3), torch.ones(1, 3), "at least two value rows"),
    (torch.ones(2, 3), torch.ones(4, 2), "share d_v"),
    (torch.ones(3), torch.ones(4, 3), "share d_v"),
    (torch.tensor([[math.nan, 0.0]]), torch.eye(2), "non-finite"),
    (torch.full((1, 2), 1e200, dtype=torch.float64), torch.full((2, 2), 1e200, dtype=torch.float64), "overflow float64"),
])
def test_decode_bad_input(outputs, values, match):
    with pytest.raises(ValueError, match=match):
        decode(outputs, values)


def test_helpers_and_storage_bits():
    k, v = as_pairs([[1, 0]], [[0.5]], 2, 1, torch.float64, torch.device("cpu"))
    assert k.dtype == v.dtype == torch.float64
    assert as_queries([1, 2], 2, torch.float32, "cpu").dtype == torch.float32
    assert storage_bits(torch.float64) == 64 and storage_bits(torch.bool) == 1 and storage_bits(torch.uint8) == 8
    with pytest.raises(ValueError, match="torch.dtype"):
        storage_bits("float64")
    for dtype in (torch.complex64, torch.complex128):
        with pytest.raises(ValueError, match="real and boolean dtypes; got torch.complex"):
            storage_bits(dtype)
