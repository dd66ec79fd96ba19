"""Regenerate the static sweep index ``src/assocmem/_sweep_index.py`` from the live registry.

Run after adding a sweep or changing a preset (``tests/sweeps/test_registry.py`` fails until
then)::

    PYTHONPATH=src python tools/sweep_index.py
"""

from assocmem.sweeps.registry import write_sweep_index

if __name__ == "__main__":
    print(f"wrote {write_sweep_index()}")
