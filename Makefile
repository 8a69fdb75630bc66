# Two entry points from a fresh clone: `make book` and `make test`.
# Both create the virtual environment .venv/ inside the repository when it is missing and
# install the pinned requirements-dev.txt into it (the reader's requirements.txt, posenc
# included and editable, plus the build, test, browser and grading tools).
# `make test` also creates .venv-reader/ from requirements.txt alone (what Binder installs)
# and registers it as the Jupyter kernel `posenc-reader`, in which nbval runs every chapter.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
READER := .venv-reader
READER_STAMP := $(READER)/.installed
READER_KERNEL := posenc-reader
# Where jupyter_client finds the reader kernel's spec (written inside .venv-reader/).
READER_JUPYTER_PATH := $(CURDIR)/$(READER)/share/jupyter

# Stored outputs must not depend on the CPU that made them: numpy's AVX-512 loops (sin, cos,
# exp, log) and OpenBLAS's per-CPU kernels round differently in the last bits from the AVX2
# and libm code that every x86-64 machine has. nbval and `make notebooks` run the chapters
# with those fixed (and one BLAS thread, so sums are never split differently).
SAME_FLOATS := NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1

PDF_CONFIG := _build/config-pdf.yml

# Python writes each module's bytecode (__pycache__) the first time it is imported, so that
# the environments are installed without compiling everything (pip --no-compile) and every
# later process reuses it. A shell that sets PYTHONDONTWRITEBYTECODE (some images do) would
# make every process compile again all it imports; the variable is dropped for every recipe.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: pdf test-pdf book test test-unit test-nbgrader test-notebooks test-build test-browser test-student test-binder test-binder-fresh test-colab student bench lint notebooks colab-cell clean env env-reader

env: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-compile --upgrade pip==26.3
	# --no-compile: modules are compiled when first imported instead (see PYTHONDONTWRITEBYTECODE
	# above); pip would compile all of them, test suites and unused subpackages included.
	$(BIN)/python -m pip install --quiet --no-compile -r requirements-dev.txt
	# Build matplotlib's font cache now: its one-time notice on stderr would otherwise
	# land in the first executed cell and break nbval and the build.
	$(BIN)/python -c "import matplotlib.pyplot"
	touch $(STAMP)

## env-reader: .venv-reader/ from requirements.txt alone (Binder's environment), registered
## as the Jupyter kernel posenc-reader (its spec inside .venv-reader/share/jupyter)
env-reader: $(READER_STAMP)

$(READER_STAMP): requirements.txt pyproject.toml
	test -x $(READER)/bin/python || $(PYTHON) -m venv $(READER)
	$(READER)/bin/python -m pip install --quiet --no-compile --upgrade pip==26.3
	$(READER)/bin/python -m pip install --quiet --no-compile -r requirements.txt
	$(READER)/bin/python -m ipykernel install --prefix $(CURDIR)/$(READER) --name $(READER_KERNEL) \
	  --display-name "Python 3 (posenc reader environment)" >/dev/null
	$(READER)/bin/python -c "import matplotlib.pyplot"
	touch $(READER_STAMP)

## pdf: the whole book as one PDF, _build/latex/book.pdf (XeLaTeX through Sphinx's LaTeX
## builder, from the stored outputs that nbval verifies; exercise solutions left out).
## Needs Debian's texlive-xetex, texlive-latex-recommended, texlive-latex-extra,
## texlive-fonts-recommended, latexmk, xindy and fonts-freefont-otf (.ci/run installs them).
## Where the site has been built, the PDF is also copied beside its front page
## (_build/html/book.pdf), which the preface links to.
pdf: $(STAMP)
	rm -rf _build/latex
	$(BIN)/python scripts/config_stored_outputs.py $(PDF_CONFIG)
	# No --all: right after the warnings-as-errors site build from the same stored outputs
	# (test-build), Sphinx reuses the documents it has just read (_build/.doctrees); after any
	# change of a source or of the configuration (make book executes) it reads them again.
	# LATEXMKOPTS=-xelatex (Sphinx's LaTeX Makefile suggests it): the passes latexmk repeats for
	# the table of contents and references write no PDF; xdvipdfmx writes it once, at the end.
	LATEXMKOPTS=-xelatex $(BIN)/jupyter-book build . --builder pdflatex -W -n --keep-going --config $(PDF_CONFIG)
	if [ -d _build/html ]; then cp _build/latex/book.pdf _build/html/book.pdf; fi
	@echo "PDF: _build/latex/book.pdf"

# Builds the PDF where XeLaTeX is installed and reads it back (tests/test_pdf.py); without
# the TeX packages the test skips and says so.
test-pdf: $(STAMP)
	if command -v xelatex >/dev/null && command -v latexmk >/dev/null; then $(MAKE) pdf; fi
	$(BIN)/pytest tests/test_pdf.py -rs

## book: build the HTML site into _build/html (executes every chapter), then, where XeLaTeX
## is installed, the PDF edition, which the site offers for download (_build/html/book.pdf)
book: $(STAMP)
	$(BIN)/jupyter-book build . --all
	if command -v xelatex >/dev/null && command -v latexmk >/dev/null; then $(MAKE) --no-print-directory pdf; \
	else echo "note: the PDF edition was not built (it needs XeLaTeX and latexmk: see README)"; fi
	@echo "open _build/html/index.html"

## test: the environment, then lint, unit + property tests, nbval (strict) over every
## chapter, a warnings-as-errors build of the book, the built site in headless Chromium,
## the PDF read back, the student edition run chapter by chapter as a fresh Colab runtime
## would run it (set-up cell first), its site built and searched for any trace of a
## solution, the nbgrader round trip and the Binder environment check.
## scripts/run_tests.py runs the independent stages side by side and prints their times.
test:
	$(PYTHON) scripts/run_tests.py

# The tests of the built student site run in test-student, right after it is built.
# UNIT_WORKERS=0 runs them in one process: `make test` does, since its stages keep both cores
# busy and two workers each import everything (13 CPU-seconds more for the same tests).
UNIT_WORKERS ?= 2
test-unit: $(STAMP)
	$(BIN)/pytest -n $(UNIT_WORKERS) tests --ignore=tests/browser --ignore=tests/test_nbgrader_workflow.py --ignore=tests/test_pdf.py \
	  -k "not built_student_site"

## test-nbgrader: nbgrader's own workflow in a temporary course directory: generate_assignment
## (chapter 10 and a marker-format fixture), autograde the instructor's and the untouched
## student notebooks (full marks, zero), generate_feedback
test-nbgrader: $(STAMP)
	$(BIN)/pytest tests/test_nbgrader_workflow.py

# nbval (from .venv) runs every chapter in the kernel posenc-reader, whose Python is
# .venv-reader's (requirements.txt alone): this run is also the Binder check's execution.
# --dist loadfile: the cells of one notebook run in order in one kernel. scripts/nbval_retry.py
# starts a chapter's kernel once more if the first dies before its first reply.
test-notebooks: $(STAMP) $(READER_STAMP)
	$(SAME_FLOATS) JUPYTER_PATH=$(READER_JUPYTER_PATH) PYTHONPATH=scripts $(BIN)/pytest -n 2 --dist loadfile \
	  -p nbval_retry --nbval --nbval-kernel-name $(READER_KERNEL) chapters

# Renders the stored outputs that test-notebooks has just checked against a fresh execution
# (`make book` executes every chapter instead).
test-build: $(STAMP)
	# a fresh site: the browser test walks every page in _build/html, stale ones included
	rm -rf _build/html
	$(BIN)/python scripts/config_stored_outputs.py _build/config-stored-outputs.yml
	$(BIN)/jupyter-book build . --all -W -n --keep-going --config _build/config-stored-outputs.yml

# Skips, and says so, on a machine without Debian's chromium and chromium-driver. Two
# workers, each with its own browser: the axe-core audit takes seconds per chapter. The
# accessibility audit injects axe-core, pinned in tests/browser/package-lock.json and
# installed here from the npm registry (skipped, and said so, where npm is missing), only
# where there is a browser to inject it into.
AXE_JS := tests/browser/node_modules/axe-core/axe.min.js
test-browser: $(STAMP)
	if [ ! -f $(AXE_JS) ] && command -v npm >/dev/null && command -v chromedriver >/dev/null \
	  && { command -v chromium || command -v chromium-browser; } >/dev/null; then \
	  npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error; fi
	$(BIN)/pytest -n 2 tests/browser -rs

# The student edition, run the way Colab runs a chapter (scripts/check_colab.py: a
# Colab-like environment without posenc, each chapter's set-up cell installing it from a
# local stand-in for the repository), its outputs stored; the student site is then built
# with warnings as errors from those outputs, and searched for any trace of a solution.
# One execution checks both the Colab route and the student edition. The instructor's
# chapters (solutions included) run in nbval; `make test-colab` runs them through Colab too.
test-student: $(STAMP)
	$(BIN)/python scripts/make_student.py --out _build/student
	# one BLAS thread per kernel: two chapters run side by side, beside other stages
	OPENBLAS_NUM_THREADS=1 $(BIN)/python scripts/check_colab.py --python $(PYTHON) \
	  --edition _build/student/chapters --store --jobs 2
	$(BIN)/python scripts/config_stored_outputs.py --book _build/student _build/config-student-stored.yml
	$(BIN)/jupyter-book build _build/student --all -W -n --keep-going --config _build/config-student-stored.yml
	rm -rf _build/student/html
	mv _build/student/_build/html _build/student/html
	if [ -f _build/latex/book.pdf ]; then cp _build/latex/book.pdf _build/student/html/book.pdf; fi
	$(BIN)/pytest tests/test_student_edition.py -rs -k built_student_site

# Binder: .venv-reader is built from requirements.txt alone and nbval ran every chapter in
# it (test-notebooks); check that it holds exactly those pins, posenc from this checkout, and
# that the kernel posenc-reader is its Python. test-binder-fresh redoes it all in a new
# environment from the tracked files (minutes).
test-binder: $(STAMP) $(READER_STAMP)
	$(BIN)/python scripts/check_binder.py --venv $(READER) --kernel $(READER_KERNEL)

test-binder-fresh: $(STAMP)
	$(BIN)/python scripts/check_binder.py --fresh --python $(PYTHON)

# Colab: an environment with only what Colab preinstalls; each chapter's hidden first
# cell must install posenc from (a local stand-in for) repository.url, then run. `make test`
# runs this route on the student edition (test-student); this target runs the instructor's
# chapters through it.
test-colab: $(STAMP)
	$(BIN)/python scripts/check_colab.py --python $(PYTHON)

# The chapters are held to the package's ruff rules too (pyproject.toml).
lint: $(STAMP)
	$(BIN)/ruff check posenc tests scripts _ext chapters
	$(BIN)/ruff format --check posenc tests scripts _ext chapters

## student: the student edition (solutions removed, exercise cells stubbed) in _build/student,
## its site (built with warnings as errors, every chapter executed) in _build/student/html
student: $(STAMP)
	$(BIN)/python scripts/make_student.py --out _build/student
	$(BIN)/jupyter-book build _build/student --all -W -n --keep-going
	rm -rf _build/student/html
	mv _build/student/_build/html _build/student/html
	# the PDF edition (which holds no solutions) beside the front page, where it has been built
	if [ -f _build/latex/book.pdf ]; then cp _build/latex/book.pdf _build/student/html/book.pdf; fi
	@echo "open _build/student/html/index.html"

## colab-cell: rewrite every chapter's hidden Colab set-up cell from repository.url and
## repository.branch in _config.yml (then `make notebooks`)
colab-cell: $(STAMP)
	$(BIN)/python scripts/colab_cell.py

## notebooks: re-execute every chapter in place (after changing a chapter or posenc)
notebooks: $(STAMP)
	$(SAME_FLOATS) $(BIN)/python scripts/execute_notebooks.py

## bench: time and measure posenc against the straightforward numpy code (prints a table;
## a few minutes; `python scripts/bench.py --quick` for seconds)
bench: $(STAMP)
	$(BIN)/python scripts/bench.py

clean:
	rm -rf _build
