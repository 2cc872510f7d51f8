# QrelForge: `make run` starts the demo, `make test` runs the whole suite.
# Both create .venv and install what they need on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean system-deps

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/qrelforge demo-data --with-labels
	$(VENV)/bin/streamlit run annotate_app/server.py --server.address 127.0.0.1 --server.port $${PORT:-8501} \
		--server.headless true --browser.gatherUsageStats false --server.maxUploadSize 200 \
		--client.toolbarMode minimal

# The tests drive the app in Debian's Chromium (two replicas behind Debian's nginx in test_e2e_replicas) and
# run the store against the local PostgreSQL server.
system-deps:
	@{ command -v chromium && test -x /usr/sbin/nginx; } >/dev/null 2>&1 || { \
		echo "installing Debian's Chromium and nginx for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		chromium fonts-liberation fonts-noto-cjk nginx >/dev/null; }
	@pg_isready -q -h 127.0.0.1 -p 5432 || pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start \
		|| echo "warning: PostgreSQL is not reachable on 127.0.0.1:5432; the store tests will fail"

test: $(STAMP) system-deps
	$(PY) -m pytest -n 2 -q

# Lint: ruff (rules + the 110-column limit), the formatter, mypy on metrics/services/store, the import contract.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

bench: $(STAMP)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[bench]'
	$(PY) benchmarks/score_large.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
