"""Tests for assocmem.progress: progress bars stay silent when asked to."""

from assocmem.progress import progress, quiet


def test_progress_is_silent_when_quiet(monkeypatch):
    monkeypatch.setenv("ASSOCMEM_QUIET", "1")
    assert quiet()
    assert list(progress(range(3))) == [0, 1, 2]
    monkeypatch.delenv("ASSOCMEM_QUIET")
    monkeypatch.delenv("CI", raising=False)
    assert not quiet()
