# How Much Can a Matrix Remember? -- build and test.
#
#   make book   executes every chapter from a fresh kernel and builds the HTML in _build/html
#   make test   unit tests, notebook contract tests, nbval on every chapter (in three
#               floating-point configurations), then the browser check (make browser)
#   make browser  the book built from the committed outputs (no execution) and read in headless
#               Chromium at 1280 and 390 px; the chapters' maths under KaTeX and MathJax. Needs
#               Chromium (Debian's `chromium`, or CHROMIUM=path) and Node with npm.
#
# Both create .venv on first use. torch is installed first, pinned to the CPU build, so that no
# dependency can pull the multi-GB CUDA build. Override TORCH_SPEC / TORCH_PIP_ARGS to change it,
# e.g. TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu" on a machine whose
# pip would otherwise pick a CUDA wheel.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_SPEC ?= torch==2.13.0
TORCH_PIP_ARGS ?=
PYTEST_ARGS ?=
NOTEBOOKS ?= notebooks
NBVAL = $(BIN)/python -m pytest --nbval $(NOTEBOOKS) --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider $(PYTEST_ARGS)

# A second floating-point configuration that stands in for a reader's machine: ATen's portable
# (non-vectorised) CPU kernels instead of the AVX2/AVX-512 ones, MKL's COMPATIBLE code path
# (conditional numerical reproducibility), one thread instead of all cores. Each of the three
# changes how sums are associated and so the last digits of float64 results; the committed
# outputs must pass nbval under both configurations.
PORTABLE_ENV := ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# A third configuration: a reader's x86-64 CPU with AVX2 but no AVX-512 (most laptops), on a CPU
# that has AVX-512. ATen's AVX2 kernels (torch.backends.cpu.get_cpu_capability() reports "AVX2")
# and MKL's AVX2 code path; all cores. Under it, nbval on every chapter and the unit tests that
# recompute a committed point (a training here ends elsewhere than on the machine that stored
# it, so these tests check trained results against the spread of the stored trainings). On a
# CPU without AVX2 (ARM64, say) the step says so and is skipped; on one without AVX-512 it
# repeats the default configuration.
AVX2_ENV := ATEN_CPU_CAPABILITY=avx2 MKL_CBWR=AVX2
RECOMPUTE_TESTS := tests/mlps/test_editing_sweeps.py tests/mlps/test_lm_embedding_sweeps.py \
	tests/mlps/test_transformer_sweeps.py tests/mlps/test_capacity_sweeps.py \
	tests/mlps/test_capacity_replicate_sweeps.py tests/sdm/test_trained_sweeps.py \
	tests/sdm/test_convergence_sweeps.py tests/compare/test_table_sweeps.py
HAS_AVX2 := $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && echo yes)
STAMP := $(VENV)/.installed

# Progress bars and other interactive output stay silent in the book build and under test.
export ASSOCMEM_QUIET := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: all book test unit nbval nbval-portable nbval-avx2 browser venv bench sync clean

all: test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall when the package metadata changes.
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH_PIP_ARGS) "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e ".[book,test]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

venv: $(STAMP)

# The book is built from what the .md files say: an edited .md is copied into its .ipynb first
# (the build executes every chapter, so the HTML shows the edited chapter's fresh outputs), and
# the front matter's count of reproduction verdicts, the errata and the claims pages are
# recomputed from the committed chapters.
book: $(STAMP)
	$(BIN)/python tools/booktools.py sync-inputs
	$(BIN)/python tools/booktools.py repro-counts
	$(BIN)/python tools/booktools.py errata
	$(BIN)/python tools/booktools.py claims
	rm -rf _build/html _build/.jupyter_cache _build/jupyter_execute
	$(BIN)/jupyter-book build . -W --keep-going --builder html
	@echo "The book is in _build/html/index.html"

# Unit and contract tests, then nbval three times: in this machine's default configuration, the
# portable one and the AVX2 one above (all must pass against the same committed outputs), then
# the browser check.
test: $(STAMP)
	$(BIN)/python -m pytest tests $(PYTEST_ARGS)
	$(NBVAL)
	$(PORTABLE_ENV) $(NBVAL)
	$(MAKE) nbval-avx2
	$(MAKE) browser

# The npm packages of the browser check (MathJax served to Chromium, KaTeX for the Colab test),
# exactly as tools/browser/package-lock.json pins them.
NODE_STAMP := tools/browser/node_modules/.installed
$(NODE_STAMP): tools/browser/package.json tools/browser/package-lock.json
	cd tools/browser && npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

# The book as a reader sees it (tests/browser; rules in CONTRIBUTING.md, "How the book must
# look"): builds the HTML from the committed .ipynb outputs into $(BROWSER_OUT) (no chapter runs),
# loads every page in headless Chromium at 1280 and 390 px, writes $(BROWSER_OUT)/report.txt and
# a full-page screenshot of every page at both widths into _build/screens/; renders every
# chapter's maths under KaTeX (Colab) and MathJax. A few minutes on 2 cores.
BROWSER_OUT ?= _build/browser
browser: $(STAMP) $(NODE_STAMP)
	ASSOCMEM_BROWSER_OUT=$(BROWSER_OUT) ASSOCMEM_SCREENS=_build/screens \
		$(BIN)/python -m pytest tests/browser -m browser -p no:cacheprovider $(PYTEST_ARGS)

unit: $(STAMP)
	$(BIN)/python -m pytest tests $(PYTEST_ARGS)

# nbval alone; one chapter with NOTEBOOKS=notebooks/NN-slug.ipynb
nbval: $(STAMP)
	$(NBVAL)

nbval-portable: $(STAMP)
	$(PORTABLE_ENV) $(NBVAL)

# The AVX2 configuration: every chapter under nbval, then the tests that recompute committed points.
nbval-avx2: $(STAMP)
ifeq ($(HAS_AVX2),yes)
	$(AVX2_ENV) $(BIN)/python -c "import torch; c = torch.backends.cpu.get_cpu_capability(); assert c == 'AVX2', c"
	$(AVX2_ENV) $(NBVAL)
	$(AVX2_ENV) $(BIN)/python -m pytest $(RECOMPUTE_TESTS) -p no:cacheprovider $(PYTEST_ARGS)
else
	@echo "nbval-avx2: this CPU has no AVX2; the AVX2 configuration is skipped"
endif

# Re-execute every chapter in place (after editing its .md twin) so the committed .ipynb carries fresh outputs.
sync: $(STAMP)
	$(BIN)/python tools/booktools.py execute notebooks/*.md

# Every benchmarked fast path against its plain reference, timed interleaved in one process under
# three conditions (1 thread; 2 threads; 2 threads with one busy background process that the script
# starts and stops): ratios, fractions of the same run's GEMM rate, and the load during each block.
# About 2 min on 2 idle cores (longer under load); BENCH_ARGS=--quick for less. The per-topic scripts
# benchmarks/bench_*.py give absolute figures for one machine (run them one by one).
BENCH_ARGS ?=
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_ratios.py $(BENCH_ARGS)

clean:
	rm -rf _build
