# QrelForge: `make run` starts the demo, `make test` runs the whole suite.
# Both create .venv and install what they need on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/qrelforge score sample_corpus/qrels.trec sample_corpus/run_a.trec sample_corpus/run_b.trec \
		-m P@3 -m R@3 -m nDCG@3 -m AP -m RR --per-query

test: $(STAMP)
	$(PY) -m pytest -n 2 -q

lint: $(STAMP)
	$(VENV)/bin/ruff check .

bench: $(STAMP)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[bench]'
	$(PY) benchmarks/score_large.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
