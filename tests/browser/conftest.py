"""The browser suite: needs Chromium, Node and ``npm ci`` in tools/browser (``make browser``).

Every module here sets ``pytestmark = pytest.mark.browser``; pyproject.toml deselects that marker
from the plain ``pytest tests`` run (``-m "not browser"``) and ``make browser`` selects it
(``-m browser``). To run one file by hand:
``.venv/bin/python -m pytest tests/browser/test_checker.py -m browser``.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "browser"))
sys.path.insert(0, str(ROOT / "tools"))
