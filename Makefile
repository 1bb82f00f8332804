# The project's commands. Everything runs in a virtual environment, $(VENV), made on first use.
#   make demo    set up, train the copy-task model, print examples and its accuracy
#   make test    the test command: pytest tests/, which runs every notebook once in a Jupyter kernel
#   make docs    the website, from the notebooks, into _docs/ (no Quarto needed); MODEL=DIR: the model it runs
#   make bench   our model against nn.Transformer and CTranslate2: training, decoding, serving, padding (runs/bench/)
#   make lint    ruff check and ruff format --check, over the notebooks, tests/ and tools/
#   make dist    the wheel and the source distribution, into dist/, checked by twine
#   make stats   words, code lines and size per notebook, into CONTRIBUTING.md's table
VENV ?= .venv
BIN := $(VENV)/bin
# PyTorch is installed first and on its own: a plain `torch` requirement would pull a multi-GB CUDA
# build. Set TORCH_INDEX to the package index of the build you want (e.g. PyTorch's CPU index).
TORCH_REQUIREMENT ?= torch==2.13.0
TORCH_INDEX ?=
NB_FLAGS ?= slow
TEST_WORKERS ?= 2
# The paper's half keeps 120-character lines: pyproject.toml leaves it out of a plain `ruff`, these rules name it
PAPER_HALF := $(wildcard nbs/0[0-4]_*.ipynb)

.PHONY: install demo export clean-nbs figures readme stats sync lint format test test-slow docs bench dist

$(BIN)/python:
	python3 -m venv $(VENV)

$(VENV)/.package: pyproject.toml | $(BIN)/python  # PyTorch, then the package (editable)
	$(BIN)/python -m pip install -q "$(TORCH_REQUIREMENT)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.dev: $(VENV)/.package  # nbdev, Jupyter, pytest, the charting packages and the website's tools
	$(BIN)/python -m pip install -q -e ".[dev,docs]"
	touch $@

$(VENV)/.bench: $(VENV)/.package  # CTranslate2, for the benchmark's serving rows
	$(BIN)/python -m pip install -q -e ".[ctranslate2]"
	touch $@

install: $(VENV)/.dev  ## everything needed to run the notebooks and the tests

demo: $(VENV)/.package  ## train the copy task (under a minute of training on a 2-core CPU) and report
	$(BIN)/python -c "from annotated_transformer.copy_task import train_copy_task; print(train_copy_task())"

export: $(VENV)/.dev  ## regenerate annotated_transformer/ from the notebooks
	$(BIN)/nbdev-export

clean-nbs: $(VENV)/.dev  ## strip execution counts and stray metadata from the notebooks
	$(BIN)/nbdev-clean

readme: $(VENV)/.dev  ## regenerate README.md from nbs/index.ipynb
	$(BIN)/python tools/make_readme.py

figures: $(VENV)/.dev  ## redraw Figures 1 and 2 into nbs/images/, which the paper's notebooks and the README show
	$(BIN)/python tools/draw_figures.py

stats: $(BIN)/python  ## the table of words, code lines and size per notebook, rewritten in CONTRIBUTING.md
	$(BIN)/python tools/book_stats.py --write CONTRIBUTING.md

sync: export clean-nbs figures readme stats  ## everything generated from the notebooks, regenerated

lint: $(VENV)/.dev  ## ruff check and ruff format --check (settings in pyproject.toml; the package is generated, so not linted)
	$(BIN)/ruff check
	$(BIN)/ruff check --line-length 120 $(PAPER_HALF)
	$(BIN)/ruff format --check
	$(BIN)/ruff format --check --line-length 120 $(PAPER_HALF)

format: $(VENV)/.dev  ## ruff format, and ruff check's safe fixes, applied to the notebooks, tests/ and tools/
	$(BIN)/ruff check --fix-only
	$(BIN)/ruff check --fix-only --line-length 120 $(PAPER_HALF)
	$(BIN)/ruff format
	$(BIN)/ruff format --line-length 120 $(PAPER_HALF)

docs: $(VENV)/.dev  ## the website into _docs/ (MODEL=DIR: the model its "Try it" page runs; else a small one, trained once and cached)
	$(BIN)/python tools/build_docs.py $(if $(MODEL),--model $(MODEL))

bench: $(VENV)/.bench  ## the performance table of nbs/15_performance.ipynb; options: make bench BENCH_ARGS="--help"
	$(BIN)/python -c "import sys; from annotated_transformer.performance import main; sys.exit(main(sys.argv[1:]))" $(BENCH_ARGS)

dist: $(VENV)/.dev  ## wheel and sdist into dist/ (built with the setuptools installed, no network needed), then `twine check`
	rm -rf dist
	$(BIN)/python -m build --no-isolation --outdir dist .
	$(BIN)/python -m twine check --strict dist/*

test: $(VENV)/.dev  ## tests/, on $(TEST_WORKERS) workers: each notebook once, in a real Jupyter kernel, and the checks a notebook cannot make
	$(BIN)/python -m pytest tests/ -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

test-slow: $(VENV)/.dev  ## the same, with the cells flagged `#| slow` included
	$(BIN)/python -m pytest tests/ -n $(TEST_WORKERS) --dist loadgroup --nb-flags "$(NB_FLAGS)" $(PYTEST_ARGS)
