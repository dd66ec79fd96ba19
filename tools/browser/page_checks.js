// Runs inside every page of the built book (tools/browser/bookcheck.py evaluates it after MathJax
// has typeset the page). Returns what the page shows, as plain data; bookcheck.py applies the
// width-dependent rules and decides what is a violation.
//
//   {tex: [...], mathErrors: [...], boxes: [...], images: [...], links: [...], ids: [...],
//    title: str, duplicateScripts: [...], headers: int}
() => {
  const column = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;

  // Where an element is: the nearest section heading (its text) above it.
  const where = (el) => {
    let sec = el.closest("section");
    while (sec) {
      const h = sec.querySelector(":scope > h1, :scope > h2, :scope > h3, :scope > h4");
      if (h) return h.textContent.replace(/[#¶]\s*$/, "").trim().slice(0, 80);
      sec = sec.parentElement && sec.parentElement.closest("section");
    }
    return "(top of page)";
  };
  const snippet = (s, n = 100) => s.replace(/\s+/g, " ").trim().slice(0, n);

  // 1. TeX left as text: visible text nodes of the article outside code and typeset maths.
  const tex = [];
  const texPattern = /\\\(|\\\)|\\\[|\\\]|\\begin\{|\$\$|\$[^$\s][^$]*\\[A-Za-z]+[^$]*\$/;
  const walker = document.createTreeWalker(column, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => {
      const p = n.parentElement;
      if (!p || p.closest("pre, code, script, style, mjx-container, mjx-assistive-mml, textarea, .MathJax_Preview")) {
        return NodeFilter.FILTER_REJECT;
      }
      return NodeFilter.FILTER_ACCEPT;
    },
  });
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const m = n.textContent.match(texPattern);
    if (!m) continue;
    const p = n.parentElement;
    if (!p.getClientRects().length || getComputedStyle(p).visibility === "hidden") continue;
    tex.push({ where: where(p), text: snippet(n.textContent.slice(Math.max(0, m.index - 30)), 100) });
  }

  // 2. MathJax errors: merror nodes, data-mjx-error, and undefined macros (MathJax's noundefined
  // package typesets an unknown \macro as its name in red instead of failing).
  const mathErrors = [];
  if (window.MathJax && MathJax.startup && MathJax.startup.document) {
    for (const item of MathJax.startup.document.math) {
      const problems = [];
      if (item.root) {
        item.root.walkTree((node) => {
          if (node.isKind && node.isKind("merror")) {
            problems.push(node.attributes.get("data-mjx-error") || "merror");
          }
          if (node.isKind && node.isKind("mtext") && node.attributes.get("mathcolor") === "red") {
            const t = node.childNodes.map((c) => (c.getText ? c.getText() : "")).join("");
            if (t.startsWith("\\")) problems.push(`undefined macro ${t}`);
          }
        });
      }
      if (problems.length) {
        const el = item.start && item.start.node ? (item.start.node.parentElement || item.start.node) : column;
        mathErrors.push({ where: where(el), error: problems.join("; "), tex: snippet(item.math, 120) });
      }
    }
  }
  for (const el of column.querySelectorAll("mjx-merror, [data-mjx-error]")) {
    mathErrors.push({ where: where(el), error: el.getAttribute("data-mjx-error") || "merror", tex: snippet(el.textContent) });
  }

  // 3. Boxes that must fit the column: display equations, figures, tables, code blocks.
  // state: "fits"; "scrolls" (a scroll container inside the column holds it); "clipped" (an
  // overflow:hidden/clip box, or the column's own scrolling, cuts it); "spills" (it runs past
  // the column's edge).
  const colRect = column.getBoundingClientRect();
  const extent = (el, kind) => {
    if (kind === "equation") {
      const m = el.querySelector("mjx-math") || el;
      const r = m.getBoundingClientRect();
      return [r.left, r.right];
    }
    const r = el.getBoundingClientRect();
    if (kind === "code") return [r.left, r.left + el.scrollWidth];
    return [r.left, r.right];
  };
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.classList.length ? "." + [...el.classList].slice(0, 3).join(".") : "");
  const stateOf = (el, L, R) => {
    for (let a = el; a && a !== document.documentElement; a = a.parentElement) {
      const ox = getComputedStyle(a).overflowX;
      if (ox !== "visible") {
        const r = a.getBoundingClientRect();
        const visL = r.left + a.clientLeft;
        const visR = visL + a.clientWidth;
        if (R > visR + 1 || L < visL - 1) {
          const scrolls = (ox === "auto" || ox === "scroll") && a !== column && column.contains(a);
          return { state: scrolls ? "scrolls" : "clipped", by: describe(a), visible: visR - visL };
        }
      }
      if (a === column) break;
    }
    if (R > colRect.right + 1 || L < colRect.left - 1) {
      return { state: "spills", by: describe(column), visible: colRect.width };
    }
    return { state: "fits", by: "", visible: colRect.width };
  };
  const boxes = [];
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  const kinds = [
    ["equation", 'mjx-container[display="true"]'],
    ["figure", "img"],
    ["table", "table"],
    ["code", "pre"],
  ];
  for (const [kind, sel] of kinds) {
    for (const el of column.querySelectorAll(sel)) {
      if (!visible(el)) continue;
      const [L, R] = extent(el, kind);
      const s = stateOf(el, L, R);
      const text = kind === "figure" ? (el.getAttribute("alt") || el.getAttribute("src") || "")
        : kind === "equation" ? (el.querySelector("mjx-assistive-mml") ? "" : "") : el.textContent;
      let source = "";
      if (kind === "equation" && window.MathJax && MathJax.startup && MathJax.startup.document) {
        for (const item of MathJax.startup.document.math) {
          if (item.typesetRoot === el) { source = item.math; break; }
        }
      }
      boxes.push({
        kind, where: where(el), state: s.state, by: s.by,
        width: Math.round(R - L), room: Math.round(s.visible),
        text: snippet(source || text, 90),
      });
    }
  }

  // 4. Images: alt text and how much they are scaled down.
  const images = [];
  for (const img of document.querySelectorAll("img")) {
    const r = img.getBoundingClientRect();
    images.push({
      where: where(img), src: img.getAttribute("src") || "", alt: img.getAttribute("alt"),
      shown: Math.round(r.width), natural: img.naturalWidth, visible: visible(img),
      inColumn: column.contains(img),
    });
  }

  // 5. Links and anchors.
  const links = [];
  for (const a of document.querySelectorAll("a[href]")) {
    links.push({ href: a.href, raw: a.getAttribute("href"), text: snippet(a.textContent, 60) });
  }
  const ids = [...document.querySelectorAll("[id]")].map((e) => e.id)
    .concat([...document.querySelectorAll("a[name]")].map((e) => e.getAttribute("name")));

  // 6. Chrome: scripts included twice, visible top bars.
  const seen = new Map();
  const duplicateScripts = [];
  for (const s of document.querySelectorAll("script")) {
    const key = s.src ? "src:" + s.getAttribute("src") : "inline:" + s.textContent.trim();
    if (key === "inline:") continue;
    if (seen.has(key)) duplicateScripts.push(snippet(key, 90));
    seen.set(key, true);
  }
  const headers = [...document.querySelectorAll("header.bd-header, #pst-header")]
    .filter((h) => visible(h) && h.getBoundingClientRect().height > 0).length;

  return { tex, mathErrors, boxes, images, links, ids, title: document.title, duplicateScripts, headers };
}
