# Every target builds its own virtual environment on first use, so on a fresh
# machine `make demo` and `make test` are the only commands needed.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python

.PHONY: demo test test-cluster doc bench lint clean

$(VENV)/.installed-%: pyproject.toml setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[$*]"
	touch $@

# Prints the accuracy table, then saves the figure to lp_mst_synthetic.png in
# this directory and prints its absolute path (DEMO_OUTPUT=path changes it).
DEMO_OUTPUT ?= lp_mst_synthetic.png

demo: $(VENV)/.installed-plot
	$(PY) examples/plot_lp_mst_synthetic.py --output $(DEMO_OUTPUT)

test: $(VENV)/.installed-test
	$(PY) -m pytest -n 2 -q -m "not dask_cluster"

# Integration tests that start a local Dask cluster of worker processes (localhost).
test-cluster: $(VENV)/.installed-test
	$(PY) -m pytest -q -m dask_cluster

doc: $(VENV)/.installed-doc
	$(PY) -m sphinx -E -b html -W --keep-going doc doc/_build/html

bench: $(VENV)/.installed-plot
	$(PY) benchmarks/bench_mechanisms.py

lint: $(VENV)/.installed-test
	$(PY) -m pip install --quiet ruff
	$(PY) -m ruff check sklearn_labeldp tests benchmarks examples

clean:
	rm -rf $(VENV) doc/_build doc/auto_examples doc/generated
