# coretorch's two commands: `make demo` and `make test`. Both create .venv/ on first use and
# install (editable) the core and every distribution in the repo; reruns skip pip until a
# pyproject.toml (or this Makefile) changes.
#
#   make test            run the test suite against every installed backend, then the
#                        conformance suite through the cuda backend in emulation (no GPU needed),
#                        in JOBS pytest-xdist processes (default: the CPU count, at most 4),
#                        measuring line coverage: it prints the figures per package and fails
#                        below the floors in tools/coverage_report.py
#   make test TORCH=0    ... without installing PyTorch (tests skip their torch comparisons)
#   make test COV=0      ... without measuring coverage (Python 3.11's tracer makes a process
#                        about 1.9x slower: tests/conftest.py pauses it in tests that repeat
#                        others' lines, which keeps its cost near 1.5 minutes on 2 cores)
#   make test JOBS=1     ... in one process (what a debugger such as --pdb needs)
#   make demo            run the demo
#   make install         only set up .venv/
#   make docs            build the documentation site into site/ (tutorials are executed)
#   make compat-docs     regenerate docs/compatibility.md (PyTorch's public names coretorch has)
#   make op-coverage     regenerate docs/op-coverage.md (PyTorch's op_db samples run on coretorch)

SHELL := /bin/bash
.DEFAULT_GOAL := test
# Python's bytecode cache (__pycache__/, ignored by git) stays on even where the environment turns
# it off: each process (the demo, every test worker and subprocess) would compile the project's
# ~380 modules again, about 0.2 s each
unexport PYTHONDONTWRITEBYTECODE

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
TORCH ?= 1
TORCH_REQ := torch==2.13.0
PYTEST_ARGS ?=
COV ?= 1
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$(( n < 4 ? n : 4 )))

# Every distribution in the repo: the core, then each backend, the profiler and example packages
# (found by their pyproject.toml, so a new one is picked up without editing this file).
DISTS := . $(patsubst %/pyproject.toml,%,$(sort $(wildcard backends/*/pyproject.toml \
           profiler/pyproject.toml examples/*/pyproject.toml)))
# Test plugins installed into .venv. tests/plugins/broken* raise on import on purpose: the tests
# install those into a temporary folder themselves, never into .venv.
TEST_PLUGINS := $(patsubst %/pyproject.toml,%,$(sort $(filter-out tests/plugins/broken%, \
                  $(wildcard tests/plugins/*/pyproject.toml))))
# tensorboard: the optional extra behind coretorch.utils.tensorboard (its tests skip without it)
# mkdocs-material, mkdocstrings (ruff formats its signatures) and markdown-exec: the documentation
# site, whose build is a test; matplotlib: its benchmark charts (benchmarks/plots.py); ruff at the
# release whose formatting tests/test_lint.py checks
DOCS_DEPS := mkdocs-material mkdocstrings-python markdown-exec ruff==0.17.6 matplotlib
TEST_DEPS := pytest safetensors scikit-learn numba tensorboard mypy $(DOCS_DEPS) \
             $(if $(filter 1,$(TORCH)),$(TORCH_REQ))

PYPROJECTS := $(addsuffix /pyproject.toml,$(DISTS) $(TEST_PLUGINS))
INSTALL_KEY := $(shell (echo "$(PYPROJECTS) torch=$(TORCH)"; cat Makefile $(PYPROJECTS)) \
                 | sha1sum | cut -c1-16)
STAMP := $(VENV)/.installed-$(INSTALL_KEY)
# coverage: the line coverage `make test` prints and guards; pytest-xdist: its workers
TEST_DEPS += coverage pytest-xdist

.PHONY: test demo install docs docs-primitives compat-docs op-coverage stubs

install: $(STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)

# --no-build-isolation: the editable builds use the venv's setuptools (no download per build)
$(STAMP): | $(PY)
	$(PY) -m pip install --quiet --upgrade "setuptools>=70.1"
	$(PY) -m pip install --quiet --no-build-isolation \
	  $(addprefix -e ,$(DISTS) $(TEST_PLUGINS)) $(TEST_DEPS)
	rm -f $(VENV)/.installed-*
	touch $@

# The second run sends the conformance suite (and the cuda API tests) through the cuda backend's
# own kernel code with numpy standing in for CuPy, so it is checked on machines without a GPU.
# Where a GPU exists, the first run already tests the real CUDA path.
# Line coverage: `coverage run` starts measuring before pytest imports coretorch (its pytest
# plugin does, at startup: pytest-cov would start too late and miss every import-time line), and
# measures every Python process the tests start (pyproject.toml: patch = subprocess, ...): the
# mpiexec ranks, DataLoader workers, `python -m coretorch`. The second run adds the cuda
# backend's own lines only (measuring the core again would double its cost);
# tools/coverage_report.py prints the figures per package and fails below the floors recorded in
# it (a run narrowed by PYTEST_ARGS only prints them).
RUN_COV := $(if $(filter 1,$(COV)),-m coverage run,)
# (Each `coverage run` erases the .coverage* files of the one before: the first run's data is
# combined and set aside as .coverage-main, then merged with the second's.)
COMBINE := $(PY) -m coverage combine --quiet
# pytest-xdist workers (tests/conftest.py saves each one's coverage before it reports back)
XDIST := $(if $(filter-out 0 1,$(JOBS)),-n $(JOBS))
test: $(STAMP)
	rm -f .coverage .coverage.* .coverage-main
	$(PY) $(RUN_COV) -m pytest $(XDIST) tests $(PYTEST_ARGS)
	$(if $(RUN_COV),$(COMBINE) && mv .coverage .coverage-main && rm -f .coverage.*)
	CORETORCH_CUDA_EMULATE=1 $(PY) $(RUN_COV) $(if $(RUN_COV),--source=coretorch_cuda_cupy) \
	  -m pytest $(XDIST) -p no:cacheprovider --backend cuda \
	  --pyargs coretorch.testing.conformance tests/test_cuda_backend.py
	$(if $(RUN_COV),$(COMBINE) && $(COMBINE) --append .coverage-main)
	$(if $(RUN_COV),$(PY) tools/coverage_report.py $(if $(PYTEST_ARGS),--no-check))

# the profiled demo: trains the digits CNN under coretorch-profile, leaves trace.json for Perfetto
demo: $(STAMP)
	$(VENV)/bin/coretorch-profile --record-shapes --memory --flops --with-stack --row-limit 25 \
	  -o trace.json examples/train_digits.py --epochs 5

# the documentation site in site/ (tutorials run during the build; warnings are errors)
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

# the primitive list in docs/writing-a-backend.md, from coretorch.ops.primitives()
docs-primitives: $(STAMP)
	$(PY) tools/backend_guide_primitives.py

# what of PyTorch's public API coretorch has, per namespace (introspects the installed PyTorch)
compat-docs: $(STAMP)
	$(PY) tools/compat_docs.py -o docs/compatibility.md

# PyTorch's operator database run on coretorch: entries with an equivalent, samples and gradients
# that agree (a few minutes; expecttest is what PyTorch's test-suite module imports)
op-coverage: $(STAMP)
	$(PY) -m pip install --quiet expecttest
	$(PY) tools/opdb_yardstick.py -o docs/op-coverage.md

# coretorch/tensor/tensor_ops.pyi and coretorch/op_functions.pyi (committed; rerun after adding
# or changing ops): Tensor's op methods and the op functions from their schemas, for type checkers
stubs: $(STAMP)
	$(PY) tools/tensor_stub.py
