"""The dtype policy (assocmem.dtypes): float32/float64 computed, float16/bfloat16 refused."""

import pytest
import torch

from assocmem.dtypes import FLOAT_DTYPES, LOW_PRECISION, cast_checked, check_float_dtype


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_supported_dtypes_pass_through(dtype):
    assert check_float_dtype(dtype) is dtype


@pytest.mark.parametrize("dtype", LOW_PRECISION)
def test_low_precision_is_refused_with_the_supported_dtypes_named(dtype):
    with pytest.raises(ValueError, match=r"dtype torch\.(float16|bfloat16) is not supported.*float32"):
        check_float_dtype(dtype)


@pytest.mark.parametrize("bad", [torch.int64, torch.complex64, "float32", None, float])
def test_other_dtypes_and_non_dtypes_are_refused(bad):
    with pytest.raises(ValueError, match="dtype must be"):
        check_float_dtype(bad)


def test_a_cast_that_overflows_is_reported_as_overflow():
    x = torch.tensor([1.0, 1e300], dtype=torch.float64)
    with pytest.raises(ValueError, match=r"keys overflows torch\.float32"):
        cast_checked(x, torch.float32, "keys")
    ok = cast_checked(torch.tensor([1.0, 2.0], dtype=torch.float64), torch.float32, "keys")
    assert ok.dtype == torch.float32 and ok.tolist() == [1.0, 2.0]
    same = torch.ones(3, dtype=torch.float32)
    assert cast_checked(same, torch.float32, "keys") is same
