"""faker and tokenizers are the ``editing`` extra, not the core (issue 29, item 7): the editing
package imports without them, and the corpus says how to install them when it needs them."""

import sys

import pytest

from assocmem.mlps.editing import data


def test_the_corpus_names_the_extra_when_faker_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "faker", None)  # import faker raises ImportError
    with pytest.raises(ImportError, match=r'pip install "assocmem\[editing\]"'):
        data._optional("faker")


def test_the_core_dependencies_leave_the_editing_extra_out():
    import tomllib
    from pathlib import Path

    meta = tomllib.loads((Path(__file__).resolve().parents[3] / "pyproject.toml").read_text())
    core = " ".join(meta["project"]["dependencies"])
    assert "faker" not in core and "tokenizers" not in core
    assert meta["project"]["optional-dependencies"]["editing"] == ["faker>=30", "tokenizers>=0.19"]


def test_the_editing_package_imports_without_the_extra():
    import subprocess

    code = ("import sys; sys.modules['faker'] = None; sys.modules['tokenizers'] = None; "
            "import assocmem.mlps.editing, assocmem.sweeps; assocmem.sweeps.all_sweeps(); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
