"""The browser check flags what it should on two small pages (no book build): one that breaks every
rule and one that keeps them. tools/browser/bookcheck.py is the checker."""

import struct
import zlib

import pytest

import bookcheck

pytestmark = pytest.mark.browser

MATHJAX = "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"
HEAD = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>TITLE</title>
<style>body { margin: 0; } article.bd-article { width: 600px; max-width: 100%; margin: 0 auto; }
div.math { overflow: hidden; } div.scroll { overflow-x: auto; } img { max-width: 100%; }</style>
<script defer src="MATHJAX"></script>EXTRA</head><body><article class="bd-article">""".replace("MATHJAX", MATHJAX)


def _head(title: str, extra: str = "") -> str:
    return HEAD.replace("TITLE", title).replace("EXTRA", extra)

LONG_SUM = " + ".join(f"a_{{{i}}} b_{{{i}}}" for i in range(40))

BAD = _head(r"The \(\beta\) page", "<script>var once = 1;</script><script>var once = 1;</script>") + f"""
<section id="s1"><h1>Broken things</h1>
<div class="math">$$ {LONG_SUM} $$</div>
<p>An unknown macro \\(\\notdefined x\\) and a missing argument \\(\\frac{{a}}\\) here.</p>
<p class="mathjax_ignore">Left as TeX: \\(x^2\\) and \\begin{{align}} a \\end{{align}}.</p>
<img src="plot.png">
<img src="plot.png" alt="3f2a9c0d8e7b6a5f4e3d2c1b0a9f8e7d.png">
<img src="gone.png" alt="A file of the book that is missing, so the page gets a 404.">
<div class="scroll"><pre>{"x" * 400}</pre></div>
<a href="missing.html">a page that is not there</a> <a href="good.html#nowhere">an anchor that is not there</a>
<script>undefinedFunctionOfTheBook();</script>
</section></article><header class="bd-header" style="height: 40px">a second bar</header></body></html>"""

GOOD = _head("A plain title") + """
<section id="fine"><h1>Fine things</h1>
<div class="math">$$ a + b = c $$</div><p>Inline \\(x \\in \\mathbb{R}\\).</p>
<img src="small.png" alt="A rising line: error against the number of stored pairs.">
<div class="scroll"><pre>short code</pre></div>
<a href="bad.html#s1">a working link</a> <a href="https://example.org/">another site (not loaded)</a>
<img src="https://example.org/remote.png" alt="A picture from another site, whose request is aborted.">
</section></article></body></html>"""


def _png(width: int, height: int) -> bytes:
    """A white RGB PNG with a 100-dpi pHYs chunk."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff" * (3 * width) for _ in range(height))
    ppm = round(100 / 0.0254)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"pHYs", struct.pack(">IIB", ppm, ppm, 1)) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    html = tmp_path_factory.mktemp("site")
    (html / "bad.html").write_text(BAD)
    (html / "good.html").write_text(GOOD)
    (html / "plot.png").write_bytes(_png(1000, 300))
    (html / "small.png").write_bytes(_png(500, 300))
    return bookcheck.check(html, out=html / "out", pages=["bad.html", "good.html"]), html


def _rules(report, page, width):
    return [(v.rule, v.detail) for v in report.violations if v.page == page and v.width == width]


def test_a_page_that_keeps_the_rules_passes(report):
    rep, _ = report
    assert [v for v in rep.violations if v.page == "good.html"] == []
    assert "https://example.org/remote.png" in rep.blocked  # aborted, and not a console error


def test_an_overflowing_equation_fails_at_both_widths(report):
    rep, _ = report
    for width in (1280, 390):
        hits = [d for r, d in _rules(rep, "bad.html", width) if r == "overflow" and d.startswith("equation")]
        assert len(hits) == 1 and "clipped" in hits[0] and "a_{0} b_{0}" in hits[0], hits


def test_an_image_without_alt_and_one_with_a_file_name_fail(report):
    rep, _ = report
    alts = [d for r, d in _rules(rep, "bad.html", 1280) if r == "alt"]
    assert len(alts) == 2, alts
    scale = [d for r, d in _rules(rep, "bad.html", 1280) if r == "figure-scale"]
    assert len(scale) == 2 and "60%" in scale[0], scale  # 600 px column, 1000 px figure


def test_code_may_scroll_on_a_phone_but_not_on_a_desktop(report):
    rep, _ = report
    code = {w: [d for r, d in _rules(rep, "bad.html", w) if r == "overflow" and d.startswith("code")] for w in (1280, 390)}
    assert len(code[1280]) == 1 and "scrolls" in code[1280][0]
    assert code[390] == []


def test_maths_errors_tex_links_console_and_chrome_fail(report):
    rep, _ = report
    rules = _rules(rep, "bad.html", 1280)
    math = [d for r, d in rules if r == "math"]
    assert any("undefined macro \\notdefined" in d for d in math), math
    assert any("frac" in d for d in math), math  # MathJax's "Missing argument for \\frac"
    tex = [d for r, d in rules if r == "tex"]
    assert len(tex) == 1 and "\\(x^2\\)" in tex[0], tex
    links = sorted(d for r, d in rules if r == "link")
    assert links == ["good.html#nowhere: no anchor #nowhere", "missing.html: no such file"], links
    console = [d for r, d in rules if r == "console"]
    assert any("undefinedFunctionOfTheBook" in d for d in console), console
    assert any("HTTP 404" in d and "gone.png" in d for d in console), console
    assert not any("example.org" in d for d in console), console  # aborted on purpose: not an error
    chrome = [d for r, d in rules if r == "chrome"]
    assert any("TeX in the page title" in d for d in chrome)
    assert any("script included twice" in d for d in chrome)
    assert any("top bar" in d for d in chrome)


def test_screenshots_of_every_page_at_both_widths(report):
    _, html = report
    names = sorted(p.name for p in (html / "out" / "screens").glob("*.png"))
    assert names == ["bad-1280.png", "bad-390.png", "good-1280.png", "good-390.png"]
    assert (html / "out" / "report.json").is_file() and (html / "out" / "report.txt").is_file()
