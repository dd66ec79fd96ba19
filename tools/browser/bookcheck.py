"""The book as a reader sees it: build it without executing, then load every page in headless Chromium.

    python tools/browser/bookcheck.py build OUT     # OUT/_build/html from the committed .ipynb outputs
    python tools/browser/bookcheck.py check OUT     # check OUT/_build/html; OUT/report.{json,txt}, OUT/screens/
    python tools/browser/bookcheck.py all OUT       # both (``make browser`` runs this on _build/browser)

Every command takes its own output folder, so several people can build and check at once.
``check`` exits 1 when a page breaks a rule (the report lists them page by page), 0 otherwise.
``check --pages 30-sdm`` checks only the pages whose path contains that text.

Build: ``jupyter-book build`` with a generated copy of ``_config.yml`` whose only change is
``execute_notebooks: "off"``, so the pages show the outputs committed in ``notebooks/*.ipynb``
(nbval checks that those are current) and no chapter runs twice in ``make test``.

Check: the HTML is served on 127.0.0.1 from a thread; Chromium (the system's, driven by
Playwright: ``$CHROMIUM`` or ``/usr/bin/chromium``) loads every page at 1280 px (desktop), then
resizes it to 390 px (phone; 375 px of layout beside the scrollbar). Two browsers share the pages
(``--jobs``). MathJax is fetched from the npm copy in tools/browser/node_modules whatever
address the page asks for (``npm ci`` there first); every other request that leaves 127.0.0.1 is
aborted. After MathJax has typeset the page, tools/browser/page_checks.js reports what the page
shows and the rules below decide. The rules and their reasons are in CONTRIBUTING.md
("How the book must look"):

- ``tex``: TeX left as text (``\\(``, ``\\[``, ``$$``, ``\\begin{``, ``$...\\macro...$``);
- ``math``: a MathJax error, or an undefined macro (MathJax shows it as red text);
- ``overflow``: a display equation, figure, table or code block wider than the text column. At
  1280 px nothing may overflow, not even into a scroll box. At 390 px a code block, table or
  display equation may scroll sideways inside its own scroll box; a figure must fit; nothing
  may be clipped or run past the column;
- ``figure-scale``: at 1280 px a figure shown at less than 75 % of its size at 100 pixels per
  inch (its own resolution read from the PNG), which makes its text too small to read;
- ``alt``: an image without alt text, or with a file name or hash as alt text;
- ``link``: a link to a page of the book that does not exist, or to an anchor that is not on it;
- ``console``: an error in the browser console, an uncaught exception, or a file of the book
  that fails to load. A request to another site that the check itself aborted is not an error
  of the book and is only counted (the report lists those addresses);
- ``chrome``: a ``<title>`` with TeX in it, a script included twice, a visible second top bar.

Screenshots of every page at both widths (full page, PNG) go to ``OUT/screens`` (``--screens DIR``
elsewhere; ``make browser`` writes them to ``_build/screens``).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import yaml

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
MATHJAX = HERE / "node_modules" / "mathjax" / "es5"
PAGE_CHECKS = HERE / "page_checks.js"
WIDTHS = {"desktop": 1280, "phone": 390}
DESKTOP_MIN_WIDTH = 1000
FIGURE_MIN_SCALE = 0.75
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HASHED_NAME = re.compile(r"^[0-9a-f]{16,}(\.\w+)?$|\.(png|jpe?g|svg|gif|webp)$", re.IGNORECASE)
TEX_IN_TITLE = re.compile(r"\\[A-Za-z(\[]|\$")


@dataclass
class Violation:
    page: str
    width: int
    rule: str
    where: str
    detail: str


@dataclass
class Report:
    pages: list[str] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    seconds: float = 0.0
    timing: dict[str, float] = field(default_factory=lambda: {"load": 0.0, "inspect": 0.0, "screenshot": 0.0})

    def by_page(self) -> dict[str, list[Violation]]:
        out: dict[str, list[Violation]] = {p: [] for p in self.pages}
        for v in self.violations:
            out.setdefault(v.page, []).append(v)
        return out

    def text(self) -> str:
        lines = [
            f"{len(self.violations)} violation(s) on {sum(1 for v in self.by_page().values() if v)} "
            f"of {len(self.pages)} page(s), widths {sorted(WIDTHS.values())} px; {self.seconds:.0f} s "
            f"(" + ", ".join(f"{k} {v:.0f} s" for k, v in self.timing.items()) + ")",
        ]
        counts: dict[str, int] = {}
        for v in self.violations:
            counts[v.rule] = counts.get(v.rule, 0) + 1
        if counts:
            lines.append("by rule: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
        for page, vs in self.by_page().items():
            lines.append("")
            lines.append(f"== {page}: {len(vs) or 'OK'}")
            for v in vs:
                lines.append(f"  [{v.width}] {v.rule:12s} {v.where} :: {v.detail}")
        if self.blocked:
            lines.append("")
            lines.append(f"requests to other sites aborted by the check (not errors): {len(self.blocked)}")
            for u in sorted(set(self.blocked))[:20]:
                lines.append(f"  {u}")
        return "\n".join(lines) + "\n"

    def write(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        data = {
            "pages": self.pages,
            "seconds": round(self.seconds, 1),
            "timing": {k: round(v, 1) for k, v in self.timing.items()},
            "violations": {p: [asdict(v) for v in vs] for p, vs in self.by_page().items()},
            "blocked": sorted(set(self.blocked)),
        }
        (out / "report.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        (out / "report.txt").write_text(self.text())


# ---------------------------------------------------------------------------------------- build


def html_dir(out: Path) -> Path:
    """Where ``build`` puts the HTML for output folder ``out``."""
    return Path(out) / "_build" / "html"


def build(out: Path, source: Path = ROOT, quiet: bool = True) -> Path:
    """Build the book from the committed notebook outputs (no execution) into ``out``; return the
    HTML folder. ``out`` holds the generated config, Sphinx's doctrees and the HTML."""
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load((source / "_config.yml").read_text())
    config.setdefault("execute", {})["execute_notebooks"] = "off"
    # Jupyter Book resolves local extension folders against the config file's folder.
    for name, path in (config.get("sphinx", {}).get("local_extensions") or {}).items():
        config["sphinx"]["local_extensions"][name] = str((source / path).resolve())
    cfg = out / "_config.yml"
    cfg.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    target = html_dir(out)
    if target.exists():
        shutil.rmtree(target)
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb), "build", str(source), "--config", str(cfg), "--path-output", str(out), "--builder", "html", "--all"]
    if quiet:
        cmd.append("-q")
    subprocess.run(cmd, check=True, cwd=source)
    return target


# ---------------------------------------------------------------------------------------- serve


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # noqa: D401 - silence the access log
        pass


class Server:
    """``html`` served on 127.0.0.1 (a free port) from a daemon thread; a context manager."""

    def __init__(self, html: Path):
        handler = functools.partial(_QuietHandler, directory=str(html))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "Server":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# ---------------------------------------------------------------------------------------- check


def book_pages(html: Path) -> list[str]:
    """The book's pages, relative to ``html``: the chapters, the front and back matter and the
    API reference (``book/api``)."""
    found = [*html.glob("*/*.html"), *html.glob("book/api/*.html")]
    return sorted(str(p.relative_to(html)) for p in found if not p.parts[-2].startswith("_"))


def png_dpi(path: Path) -> float:
    """Pixels per inch stored in a PNG's pHYs chunk; 100 (matplotlib's figure.dpi) without one."""
    try:
        data = path.read_bytes()
    except OSError:
        return 100.0
    i = data.find(b"pHYs")
    if data[:8] != b"\x89PNG\r\n\x1a\n" or i < 0:
        return 100.0
    x, _y, unit = struct.unpack(">IIB", data[i + 4 : i + 13])
    return x * 0.0254 if unit == 1 and x > 0 else 100.0


def _chromium() -> str:
    exe = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(exe).exists():
        raise FileNotFoundError(
            f"no Chromium at {exe}: install Debian's `chromium` package (as .ci/run does) or set CHROMIUM"
        )
    return exe


def _ids_of(path: Path) -> set[str]:
    text = path.read_text(errors="replace")
    return set(re.findall(r'\bid="([^"]+)"', text)) | set(re.findall(r'\bname="([^"]+)"', text))


def check(
    html: Path,
    out: Path | None = None,
    pages: list[str] | None = None,
    widths: dict[str, int] | None = None,
    screenshots: bool = True,
    screens: Path | None = None,
    jobs: int = 2,
) -> Report:
    """Load ``pages`` (default: every page of the book in ``html``) at each width and apply the rules.

    ``out``: where report.json, report.txt and (unless ``screens`` names another folder) screens/
    go; nothing is written when None. ``jobs``: browsers working at once, each on its share of
    the pages (in its own process). Raises FileNotFoundError when Chromium or the local MathJax
    copy is missing.
    """
    html = Path(html).resolve()
    widths = widths or WIDTHS
    pages = list(pages if pages is not None else book_pages(html))
    if not (MATHJAX / "tex-mml-chtml.js").exists():
        raise FileNotFoundError(f"no MathJax at {MATHJAX}: run `npm ci` in {HERE}")
    _chromium()
    report = Report(pages=pages)
    if screens is None and out is not None:
        screens = Path(out) / "screens"
    if not screenshots:
        screens = None
    if screens is not None:
        screens = Path(screens).resolve()
        if screens.exists():
            shutil.rmtree(screens)
        screens.mkdir(parents=True)
    start = time.perf_counter()
    # Longest pages first, dealt out in turn, so that the browsers finish at about the same time.
    by_size = sorted(pages, key=lambda p: -(html / p).stat().st_size if (html / p).exists() else 0)
    jobs = max(1, min(jobs, len(pages)))
    shares = [by_size[i::jobs] for i in range(jobs)]
    args = [(str(html), share, widths, str(screens) if screens else None) for share in shares]
    if jobs == 1:
        results = [_check_pages(*args[0])]
    else:
        import concurrent.futures
        import multiprocessing

        with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(_check_pages, *zip(*args)))
    seen_ids: dict[Path, set[str]] = {}
    links: list[tuple[str, int, dict]] = []
    blocked: set[str] = set()
    for r in results:
        report.violations += r["violations"]
        seen_ids.update({Path(k): v for k, v in r["ids"].items()})
        links += r["links"]
        blocked |= r["blocked"]
        for k, v in r["timing"].items():
            report.timing[k] += v
    order = {p: i for i, p in enumerate(pages)}
    report.violations.sort(key=lambda v: (order.get(v.page, len(order)), -v.width))
    report.blocked = sorted(blocked)
    report.violations += _check_links(html, links, seen_ids)
    report.seconds = time.perf_counter() - start
    if out is not None:
        report.write(Path(out))
    return report


def _check_pages(html: str, pages: list[str], widths: dict[str, int], screens: str | None) -> dict:
    """One browser's share of :func:`check`: serve ``html``, load ``pages``, apply the page rules.

    Returns the violations, the ids of every page, the links (page-relative), the addresses of
    other sites that were aborted, and the time spent loading, inspecting and screenshotting."""
    from playwright.sync_api import sync_playwright

    html = Path(html)
    js = PAGE_CHECKS.read_text()
    violations: list[Violation] = []
    ids: dict[str, set[str]] = {}
    links: list[tuple[str, int, dict]] = []
    timing = {"load": 0.0, "inspect": 0.0, "screenshot": 0.0}
    blocked: set[str] = set()

    with Server(html) as server, sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:

        def route(r):
            url = r.request.url
            if url.startswith(server.base):
                return r.continue_()
            m = re.search(r"/mathjax(?:@[^/]*)?/es5/(.+)$", urlsplit(url).path)
            if m:
                f = MATHJAX / m.group(1)
                if f.is_file():
                    return r.fulfill(path=str(f), headers={"Access-Control-Allow-Origin": "*"})
                return r.fulfill(status=404, body="not in the local MathJax copy")
            blocked.add(url)
            return r.abort("blockedbyclient")

        context = pw.chromium.launch_persistent_context(
            profile,
            executable_path=_chromium(),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
            device_scale_factor=1,
            service_workers="block",
            # Playwright hides scrollbars in headless mode; a reader sees them, and so should the
            # screenshots (a scroll box's scrollbar is its visible affordance).
            ignore_default_args=["--hide-scrollbars"],
        )
        context.route("**/*", route)
        page = context.new_page()
        page.set_default_timeout(120_000)  # a long chapter on a busy 2-core machine
        cdp = context.new_cdp_session(page)
        events: list[tuple[str, str]] = []

        def on_console(msg):
            if msg.type != "error":
                return
            loc = (msg.location or {}).get("url", "")
            text = msg.text
            if "ERR_BLOCKED_BY_CLIENT" in text or ("Failed to load resource" in text and loc in blocked):
                return  # a request to another site that this check aborted
            if "Failed to load resource" in text and loc.startswith(server.base):
                return  # the response and requestfailed handlers report the book's own files
            events.append(("console", f"{text} ({loc})" if loc else text))

        page.on("console", on_console)
        page.on("pageerror", lambda exc: events.append(("console", f"uncaught {exc}")))
        page.on(
            "response",
            lambda resp: events.append(("console", f"HTTP {resp.status} for {resp.url}"))
            if resp.url.startswith(server.base) and resp.status >= 400
            else None,
        )
        page.on(
            "requestfailed",
            lambda req: events.append(("console", f"failed to load {req.url}: {req.failure}"))
            if req.url.startswith(server.base)
            else None,
        )

        # Each page is loaded once, at the first width, and then resized to the others (as a reader
        # turning a tablet would): the layout follows the CSS media queries, MathJax's output does
        # not depend on the width, and the page is not typeset twice. Console errors belong to the load.
        for name in pages:
            events.clear()
            for i, width in enumerate(widths.values()):
                t0 = time.perf_counter()
                page.set_viewport_size({"width": width, "height": 900})
                if i == 0:
                    page.goto(server.base + name, wait_until="load")
                    page.evaluate(
                        "async () => { if (window.MathJax && MathJax.startup && MathJax.startup.promise)"
                        " { await MathJax.startup.promise; } await document.fonts.ready; return true; }"
                    )
                else:
                    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                t1 = time.perf_counter()
                data = page.evaluate(js)
                t2 = time.perf_counter()
                if screens is not None:
                    shot = Path(screens) / f"{name.replace('/', '__').removesuffix('.html')}-{width}.png"
                    _screenshot(page, cdp, shot)
                t3 = time.perf_counter()
                timing["load"] += t1 - t0
                timing["inspect"] += t2 - t1
                timing["screenshot"] += t3 - t2
                violations += _apply_rules(html, name, width, data, list(events) if i == 0 else [])
                if i == 0:
                    ids[str(html / name)] = set(data["ids"])
                    # Links as page-relative paths: the other browsers serve on other ports.
                    for link in data["links"]:
                        href = link["href"]
                        if href.startswith(server.base):
                            href = "/" + href[len(server.base):]
                        else:
                            href = None
                        links.append((name, width, {**link, "href": href}))
        context.close()
    return {"violations": violations, "ids": ids, "links": links, "blocked": blocked, "timing": timing}


def _screenshot(page, cdp, path: Path) -> None:
    """A full-page PNG of ``page``. Through Playwright's CDP session with Chromium's faster PNG
    encoder (``optimizeForSpeed``: half the time of ``page.screenshot`` on a long chapter, for a
    somewhat larger file); ``page.screenshot(full_page=True)`` if that fails."""
    import base64

    try:
        size = cdp.send("Page.getLayoutMetrics")["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        shot = cdp.send(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True, "optimizeForSpeed": True, "clip": clip},
        )
        path.write_bytes(base64.b64decode(shot["data"]))
    except Exception:  # noqa: BLE001 - an older Chromium without these options
        page.screenshot(path=str(path), full_page=True)


def _apply_rules(html: Path, name: str, width: int, data: dict, events: list[tuple[str, str]]) -> list[Violation]:
    desktop = width >= DESKTOP_MIN_WIDTH
    out: list[Violation] = []

    def add(rule, where, detail):
        out.append(Violation(name, width, rule, where, detail))

    for t in data["tex"]:
        add("tex", t["where"], f"TeX shown as text: \"{t['text']}\"")
    seen = set()
    for e in data["mathErrors"]:
        key = (e["where"], e["error"], e["tex"])
        if key not in seen:
            seen.add(key)
            add("math", e["where"], f"{e['error']} in \"{e['tex']}\"")
    for b in data["boxes"]:
        state, kind = b["state"], b["kind"]
        if state == "fits":
            continue
        if state == "scrolls" and not desktop and kind in ("code", "table", "equation"):
            continue  # allowed on a phone: it scrolls inside its own box
        what = f"{kind} {b['width']} px wide, {b['room']} px of room, {state}"
        if b["by"] and state != "spills":
            what += f" (in {b['by']})"
        add("overflow", b["where"], f"{what}: \"{b['text']}\"")
    for img in data["images"]:
        alt = (img["alt"] or "").strip()
        src_name = img["src"].rsplit("/", 1)[-1]
        if not alt or HASHED_NAME.search(alt) or alt == src_name:
            add("alt", img["where"], f"image {src_name} has alt text {img['alt']!r}")
        if desktop and img["visible"] and img["inColumn"] and img["natural"] and img["src"]:
            local = (html / name).parent / unquote(img["src"].split("?")[0])
            dpi = png_dpi(local) if local.suffix.lower() == ".png" else 100.0
            scale = img["shown"] / (img["natural"] * 100.0 / dpi)
            if scale < FIGURE_MIN_SCALE - 1e-9:
                add(
                    "figure-scale",
                    img["where"],
                    f"image {src_name} shown at {scale:.0%} of its size at 100 px/inch "
                    f"({img['shown']} of {img['natural']} px at {dpi:.0f} dpi)",
                )
    if TEX_IN_TITLE.search(data["title"]):
        add("chrome", "<title>", f"TeX in the page title: {data['title']!r}")
    for s in data["duplicateScripts"]:
        add("chrome", "<head>", f"script included twice: {s}")
    if data["headers"] > 0:
        add("chrome", "page header", f"{data['headers']} visible top bar(s) besides the article header")
    for kind, text in dict.fromkeys(events):
        add(kind, "(page)", text[:300])
    return out


def _check_links(html: Path, links, seen_ids: dict[Path, set[str]]) -> list[Violation]:
    out: list[Violation] = []
    done = set()
    for name, width, link in links:
        if link["href"] is None:
            continue  # another site: not checked (the check runs offline)
        parts = urlsplit(link["href"])
        rel = unquote(parts.path).lstrip("/")
        path = html / rel
        if rel == "" or rel.endswith("/"):
            path = path / "index.html"
        frag = unquote(parts.fragment)
        key = (name, str(path), frag)
        if key in done:
            continue
        done.add(key)
        if not path.is_file():
            out.append(Violation(name, width, "link", link["text"] or "(link)", f"{link['raw']}: no such file"))
            continue
        if frag and path.suffix == ".html":
            ids = seen_ids.get(path)
            if ids is None:
                ids = seen_ids[path] = _ids_of(path)
            if frag not in ids:
                out.append(Violation(name, width, "link", link["text"] or "(link)", f"{link['raw']}: no anchor #{frag}"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cmd", choices=["build", "check", "all"])
    parser.add_argument("out", type=Path, help="output folder (HTML in OUT/_build/html, report and screens in OUT)")
    parser.add_argument("--pages", nargs="*", help="check only pages whose path contains one of these")
    parser.add_argument("--no-screens", action="store_true", help="skip the screenshots")
    parser.add_argument("--screens", type=Path, help="screenshot folder (default OUT/screens)")
    parser.add_argument("--jobs", type=int, default=2, help="browsers at once (default 2)")
    args = parser.parse_args(argv)
    if args.cmd in ("build", "all"):
        t = time.perf_counter()
        build(args.out)
        print(f"built {html_dir(args.out)} in {time.perf_counter() - t:.0f} s", flush=True)
    if args.cmd in ("check", "all"):
        html = html_dir(args.out)
        pages = book_pages(html)
        if args.pages:
            pages = [p for p in pages if any(s in p for s in args.pages)]
        report = check(html, out=args.out, pages=pages, screenshots=not args.no_screens, screens=args.screens,
                       jobs=args.jobs)
        sys.stdout.write(report.text())
        print(f"report: {Path(args.out) / 'report.txt'} (and report.json); "
              f"screenshots: {args.screens or Path(args.out) / 'screens'}")
        return 1 if report.violations else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
