// Renders TeX with KaTeX (Colab's renderer for markdown maths) and with MathJax 3 (Jupyter's and
// the book's), from the local npm copies in node_modules, and reports every error.
//
//   node tools/browser/check_maths.js < items.json
//
// Input: a JSON list of {"where": str, "tex": str, "display": bool}, in reading order. KaTeX runs
// as a notebook front end does: one macros object shared by every expression, with
// globalGroup so that a definition in an earlier cell holds in later ones. Output (stdout): a JSON
// list of {"where", "renderer", "tex", "error"}; empty when everything renders.
"use strict";
const fs = require("fs");
const path = require("path");
const katex = require("katex");

async function main() {
  const items = JSON.parse(fs.readFileSync(0, "utf8"));
  const errors = [];
  const macros = {};
  for (const it of items) {
    try {
      katex.renderToString(it.tex, {
        displayMode: !!it.display, throwOnError: true, strict: "ignore", macros, globalGroup: true,
      });
    } catch (e) {
      errors.push({ where: it.where, renderer: "katex", tex: it.tex, error: String(e.message || e) });
    }
  }
  // MathJax 3 with the TeX input jax (all packages) and a DOM-free adaptor.
  global.MathJax = {
    loader: {
      paths: { mathjax: path.join(__dirname, "node_modules", "mathjax", "es5") },
      load: ["input/tex-full", "adaptors/liteDOM", "output/svg"],
      require: require,
    },
    // Without noundefined, an undefined macro is an error rather than red text.
    tex: { packages: { "[-]": ["noundefined"] }, formatError: (jax, err) => { throw err; } },
    startup: { typeset: false },
  };
  require(path.join(__dirname, "node_modules", "mathjax", "es5", "startup.js"));
  await MathJax.startup.promise;
  for (const it of items) {
    try {
      const node = MathJax.tex2svg(it.tex, { display: !!it.display });
      const html = MathJax.startup.adaptor.outerHTML(node);
      if (html.includes("data-mjx-error") || html.includes("merror")) {
        const m = html.match(/data-mjx-error="([^"]*)"/);
        throw new Error(m ? m[1] : "merror");
      }
    } catch (e) {
      errors.push({ where: it.where, renderer: "mathjax", tex: it.tex, error: String(e.message || e) });
    }
  }
  process.stdout.write(JSON.stringify(errors, null, 1) + "\n");
}

main().catch((e) => { console.error(e); process.exit(2); });
