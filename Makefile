# The project's commands. `make test` is the test command; CI runs it through .ci/run.
PYTHON ?= python3
# PyTorch is installed first and on its own: a plain `torch` requirement would pull a multi-GB CUDA
# build. Set TORCH_INDEX to the package index of the build you want (e.g. PyTorch's CPU index).
TORCH_REQUIREMENT ?= torch==2.13.0
TORCH_INDEX ?=
NB_FLAGS ?= slow

.PHONY: install export clean-nbs readme sync test test-slow

install:  ## PyTorch, then the package in editable mode with the development tools
	$(PYTHON) -m pip install "$(TORCH_REQUIREMENT)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PYTHON) -m pip install -e ".[dev]"

export:  ## regenerate annotated_transformer/ from the notebooks
	nbdev-export

clean-nbs:  ## strip execution counts and stray metadata from the notebooks
	nbdev-clean

readme:  ## regenerate README.md from nbs/index.ipynb
	$(PYTHON) tools/make_readme.py

sync: export clean-nbs readme  ## everything generated from the notebooks, regenerated

test:  ## every notebook under nbdev-test, then tests/ (each notebook again in a real Jupyter kernel)
	nbdev-test --n-workers 2
	$(PYTHON) -m pytest tests/ $(PYTEST_ARGS)

test-slow:  ## the same, with the cells flagged `#| slow` included
	nbdev-test --n-workers 2 --flags "$(NB_FLAGS)"
	$(PYTHON) -m pytest tests/ --nb-flags "$(NB_FLAGS)" $(PYTEST_ARGS)
