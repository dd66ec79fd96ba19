"""Tests of assocmem.sdm.projections as a package: its docstring and its modules cite public
sources only."""

import importlib
import inspect
import pkgutil


def test_docstrings_cite_public_sources_only():
    from assocmem.sdm import projections

    src = inspect.getsource(projections)
    assert "REFERENCE" not in src and "[REF]" not in src
    assert "TrentBrick/attention-approximates-sdm" in src and "[BP21-code]" in src
    for info in pkgutil.iter_modules(projections.__path__):
        sub = importlib.import_module(f"{projections.__name__}.{info.name}")
        sub_src = inspect.getsource(sub)
        assert "REFERENCE" not in sub_src and "[REF]" not in sub_src, sub.__name__
