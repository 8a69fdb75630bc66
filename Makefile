# Two entry points from a fresh clone: `make book` and `make test`.
# Both create the virtual environment .venv/ inside the repository when it is missing and
# install the pinned requirements.txt into it (posenc included, editable).
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: book test test-unit test-notebooks test-build test-browser test-student test-binder test-binder-fresh test-colab student bench lint notebooks colab-cell clean env

env: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip==26.3
	$(BIN)/python -m pip install --quiet -r requirements.txt
	# Build matplotlib's font cache now: its one-time notice on stderr would otherwise
	# land in the first executed cell and break nbval and the build.
	$(BIN)/python -c "import matplotlib.pyplot"
	touch $(STAMP)

## book: build the HTML site into _build/html (executes every chapter)
book: $(STAMP)
	$(BIN)/jupyter-book build . --all
	@echo "open _build/html/index.html"

## test: the environment, then lint, unit + property tests, nbval (strict) over every
## chapter, a warnings-as-errors build of the book, the built site in headless Chromium,
## the student edition (built, then searched for any trace of a solution), the Binder
## environment check and every chapter run as a fresh Colab runtime would run it.
## scripts/run_tests.py runs the independent stages side by side and prints their times.
test:
	$(PYTHON) scripts/run_tests.py

test-unit: $(STAMP)
	$(BIN)/pytest -n 2 tests --ignore=tests/browser

# --dist loadfile: the cells of one notebook run in order in one kernel.
test-notebooks: $(STAMP)
	$(BIN)/pytest -n 2 --dist loadfile --nbval --nbval-current-env chapters

# Renders the stored outputs that test-notebooks has just checked against a fresh execution
# (`make book` executes every chapter instead).
test-build: $(STAMP)
	$(BIN)/python scripts/config_stored_outputs.py _build/config-stored-outputs.yml
	$(BIN)/jupyter-book build . --all -W -n --keep-going --config _build/config-stored-outputs.yml

# Skips, and says so, on a machine without Debian's chromium and chromium-driver.
test-browser: $(STAMP)
	$(BIN)/pytest tests/browser -rs

test-student: student
	test -d _build/student/html
	$(BIN)/pytest tests/test_student_edition.py -rs -k built_student_site

# Binder: the test environment is built from requirements.txt alone; check that it holds
# nothing else (the chapters ran in it under test-notebooks). test-binder-fresh redoes it
# all in a new environment from the tracked files (minutes).
test-binder: $(STAMP)
	$(BIN)/python scripts/check_binder.py

test-binder-fresh: $(STAMP)
	$(BIN)/python scripts/check_binder.py --fresh --python $(PYTHON)

# Colab: an environment with only what Colab preinstalls; each chapter's hidden first
# cell must install posenc from (a local stand-in for) repository.url, then run.
test-colab: $(STAMP)
	$(BIN)/python scripts/check_colab.py --python $(PYTHON)

lint: $(STAMP)
	$(BIN)/ruff check posenc tests scripts _ext
	$(BIN)/ruff format --check posenc tests scripts _ext

## student: the student edition (solutions removed, exercise cells stubbed) in _build/student,
## its site (built with warnings as errors, every chapter executed) in _build/student/html
student: $(STAMP)
	$(BIN)/python scripts/make_student.py --out _build/student
	$(BIN)/jupyter-book build _build/student --all -W -n --keep-going
	rm -rf _build/student/html
	mv _build/student/_build/html _build/student/html
	@echo "open _build/student/html/index.html"

## colab-cell: rewrite every chapter's hidden Colab set-up cell from repository.url and
## repository.branch in _config.yml (then `make notebooks`)
colab-cell: $(STAMP)
	$(BIN)/python scripts/colab_cell.py

## notebooks: re-execute every chapter in place (after changing a chapter or posenc)
notebooks: $(STAMP)
	$(BIN)/python scripts/execute_notebooks.py

## bench: time and measure posenc against the straightforward numpy code (prints a table;
## a few minutes; `python -m posenc.bench --quick` for seconds)
bench: $(STAMP)
	$(BIN)/python -m posenc.bench

clean:
	rm -rf _build
