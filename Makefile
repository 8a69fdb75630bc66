# Two entry points from a fresh clone: `make book` and `make test`. `make help` lists the rest.
# .venv/ holds requirements-dev.txt (the reader's pins plus the tools); .venv-reader/ holds
# requirements.txt alone (Binder's environment), the kernel nbval runs every chapter in.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := env
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
READER := .venv-reader
READER_STAMP := $(READER)/.installed
READER_KERNEL := posenc-reader
READER_JUPYTER_PATH := $(CURDIR)/$(READER)/share/jupyter

# Stored outputs must not depend on the CPU: numpy's AVX-512 loops and OpenBLAS's per-CPU
# kernels round differently in the last bits, so chapters always run with these fixed.
SAME_FLOATS := NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1

PDF_CONFIG := _build/config-pdf.yml

# Environments are installed with pip --no-compile and Python writes bytecode on first
# import; a shell that sets PYTHONDONTWRITEBYTECODE would make every process compile again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: help pdf test-pdf book test test-unit test-nbgrader test-notebooks test-build test-browser test-student test-binder test-binder-fresh test-colab student bench lint notebooks colab-cell clean env env-reader

## help: list the targets
help:
	@awk '/^## [a-z-]+: / { sub(/^## /, ""); n = index($$0, ":"); printf "  %-18s %s\n", substr($$0, 1, n - 1), substr($$0, n + 2) }' $(firstword $(MAKEFILE_LIST))

## env: .venv/ from requirements-dev.txt (the default target)
env: $(STAMP)

# --no-compile: modules are compiled when first imported, not all of them at install time.
# Importing matplotlib.pyplot builds its font cache now: its notice would break nbval.
$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-compile --upgrade pip==26.3
	$(BIN)/python -m pip install --quiet --no-compile -r requirements-dev.txt
	$(BIN)/python -c "import matplotlib.pyplot"
	touch $(STAMP)

## env-reader: .venv-reader/ from requirements.txt alone, registered as kernel posenc-reader
env-reader: $(READER_STAMP)

$(READER_STAMP): requirements.txt pyproject.toml
	test -x $(READER)/bin/python || $(PYTHON) -m venv $(READER)
	$(READER)/bin/python -m pip install --quiet --no-compile --upgrade pip==26.3
	$(READER)/bin/python -m pip install --quiet --no-compile -r requirements.txt
	$(READER)/bin/python -m ipykernel install --prefix $(CURDIR)/$(READER) --name $(READER_KERNEL) \
	  --display-name "Python 3 (posenc reader environment)" >/dev/null
	$(READER)/bin/python -c "import matplotlib.pyplot"
	touch $(READER_STAMP)

# No --all: right after test-build Sphinx reuses the documents it has just read.
# LATEXMKOPTS=-xelatex: latexmk's repeated passes write no PDF; xdvipdfmx writes it once.
## pdf: the book as one PDF, _build/latex/book.pdf (XeLaTeX; copied into _build/html if built)
pdf: $(STAMP)
	rm -rf _build/latex
	$(BIN)/python scripts/config_stored_outputs.py $(PDF_CONFIG)
	LATEXMKOPTS=-xelatex $(BIN)/jupyter-book build . --builder pdflatex -W -n --keep-going --config $(PDF_CONFIG)
	if [ -d _build/html ]; then cp _build/latex/book.pdf _build/html/book.pdf; fi
	@echo "PDF: _build/latex/book.pdf"

## test-pdf: build the PDF where XeLaTeX is installed and read it back (else skipped, said so)
test-pdf: $(STAMP)
	if command -v xelatex >/dev/null && command -v latexmk >/dev/null; then $(MAKE) pdf; fi
	$(BIN)/pytest tests/test_pdf.py tests/test_site_weight.py -rs

## book: build the site into _build/html, executing every chapter (and the PDF where possible)
book: $(STAMP)
	$(BIN)/jupyter-book build . --all
	if command -v xelatex >/dev/null && command -v latexmk >/dev/null; then $(MAKE) --no-print-directory pdf; \
	else echo "note: the PDF edition was not built (it needs XeLaTeX and latexmk: see CONTRIBUTING.md)"; fi
	@echo "open _build/html/index.html"

## test: lint and every test-* stage (not -fresh, -colab), side by side, with a table of times
test:
	$(PYTHON) scripts/run_tests.py

# `make test` passes UNIT_WORKERS=0: its other stages keep both cores busy, and each worker
# would import everything again.
UNIT_WORKERS ?= 2
## test-unit: unit and property tests of posenc and the tooling
test-unit: $(STAMP)
	$(BIN)/pytest -n $(UNIT_WORKERS) tests --ignore=tests/browser --ignore=tests/test_nbgrader_workflow.py --ignore=tests/test_pdf.py --ignore=tests/test_site_weight.py \
	  -k "not built_student_site"

## test-nbgrader: nbgrader's generate_assignment, autograde and feedback round trip
test-nbgrader: $(STAMP)
	$(BIN)/pytest tests/test_nbgrader_workflow.py

# --dist loadfile keeps a notebook's cells in order in one kernel; nbval_retry restarts a
# kernel that dies before its first reply.
## test-notebooks: nbval (strict) over every chapter, in the reader kernel
test-notebooks: $(STAMP) $(READER_STAMP)
	$(SAME_FLOATS) JUPYTER_PATH=$(READER_JUPYTER_PATH) PYTHONPATH=scripts $(BIN)/pytest -n 2 --dist loadfile \
	  -p nbval_retry --nbval --nbval-kernel-name $(READER_KERNEL) chapters

# A fresh site, since the browser test walks every page in _build/html.
## test-build: the site built with warnings as errors from the stored outputs nbval checks
test-build: $(STAMP)
	rm -rf _build/html
	$(BIN)/python scripts/config_stored_outputs.py _build/config-stored-outputs.yml
	$(BIN)/jupyter-book build . --all -W -n --keep-going --config _build/config-stored-outputs.yml

# axe-core (pinned in tests/browser/package-lock.json) is installed with npm only where
# there is a browser to inject it into.
AXE_JS := tests/browser/node_modules/axe-core/axe.min.js
## test-browser: the built site in headless chromium, with axe-core (skipped, said so, without them)
test-browser: $(STAMP)
	if [ ! -f $(AXE_JS) ] && command -v npm >/dev/null && command -v chromedriver >/dev/null \
	  && { command -v chromium || command -v chromium-browser; } >/dev/null; then \
	  npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error; fi
	$(BIN)/pytest -n 2 tests/browser -rs

# One execution checks both the Colab route and the student edition; one BLAS thread per
# kernel, since two chapters run side by side beside other stages.
## test-student: student edition run as Colab runs it, its site built and searched for solutions
test-student: $(STAMP)
	$(BIN)/python scripts/make_student.py --out _build/student
	OPENBLAS_NUM_THREADS=1 $(BIN)/python scripts/check_colab.py --python $(PYTHON) \
	  --edition _build/student/chapters --store --jobs 2
	$(BIN)/python scripts/config_stored_outputs.py --book _build/student _build/config-student-stored.yml
	$(BIN)/jupyter-book build _build/student --all -W -n --keep-going --config _build/config-student-stored.yml
	rm -rf _build/student/html
	mv _build/student/_build/html _build/student/html
	$(BIN)/pytest tests/test_student_edition.py -rs -k built_student_site

## test-binder: .venv-reader holds exactly requirements.txt and posenc from this checkout
test-binder: $(STAMP) $(READER_STAMP)
	$(BIN)/python scripts/check_binder.py --venv $(READER) --kernel $(READER_KERNEL)

## test-binder-fresh: the Binder check in a new environment from the tracked files (minutes)
test-binder-fresh: $(STAMP)
	$(BIN)/python scripts/check_binder.py --fresh --python $(PYTHON)

## test-colab: the instructor's chapters run as on a fresh Colab runtime
test-colab: $(STAMP)
	$(BIN)/python scripts/check_colab.py --python $(PYTHON)

# The workflows are checked offline: against GitHub's workflow schema (bundled with
# check-jsonschema) and by zizmor's security audit (unpinned actions, permissions, injection),
# which fails on a finding of medium severity or more.
## lint: ruff check and ruff format --check (chapters included), the workflows' schema and audit
lint: $(STAMP)
	$(BIN)/ruff check posenc tests scripts _ext chapters
	$(BIN)/ruff format --check posenc tests scripts _ext chapters
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(BIN)/zizmor --offline --min-severity medium .github/workflows

## student: the student edition in _build/student, its site in _build/student/html
student: $(STAMP)
	$(BIN)/python scripts/make_student.py --out _build/student
	$(BIN)/jupyter-book build _build/student --all -W -n --keep-going
	rm -rf _build/student/html
	mv _build/student/_build/html _build/student/html
	@echo "open _build/student/html/index.html"

## colab-cell: rewrite every chapter's Colab set-up cell from repository.url and .branch
colab-cell: $(STAMP)
	$(BIN)/python scripts/colab_cell.py

## notebooks: re-execute every chapter in place (after changing a chapter or posenc)
notebooks: $(STAMP)
	$(SAME_FLOATS) $(BIN)/python scripts/execute_notebooks.py

## bench: time posenc against straightforward numpy on one CPU (taskset -c 0 where available; minutes; scripts/bench.py --quick: seconds)
bench: $(STAMP)
	if command -v taskset >/dev/null; then taskset -c 0 $(BIN)/python scripts/bench.py; else $(BIN)/python scripts/bench.py; fi

## clean: remove _build/
clean:
	rm -rf _build
