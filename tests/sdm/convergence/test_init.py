"""Tests of assocmem.sdm.convergence as a package: its docstring and its modules cite public
sources only (the authors' protocol is documented from their public repository)."""

import importlib
import inspect
import pkgutil


def test_docstrings_cite_public_sources_only():
    from assocmem.sdm import convergence, projections

    for mod in (convergence, projections):
        src = inspect.getsource(mod)
        assert "REFERENCE" not in src and "[REF]" not in src, mod.__name__
        assert "TrentBrick/attention-approximates-sdm" in src
        for info in pkgutil.iter_modules(mod.__path__):
            sub = importlib.import_module(f"{mod.__name__}.{info.name}")
            sub_src = inspect.getsource(sub)
            assert "REFERENCE" not in sub_src and "[REF]" not in sub_src, sub.__name__
