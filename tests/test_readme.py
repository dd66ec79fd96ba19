"""README's "Using the library" example runs and prints what README says it prints."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_example_prints_what_readme_says():
    text = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for line in out.strip().splitlines():
        assert f"`{line}`" in text, f"README does not quote the example's output line {line!r}"
