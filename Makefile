# QrelForge: `make run` starts the demo, `make test` runs the whole suite.
# Both create .venv and install what they need on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
APP_STAMP := $(VENV)/.installed-app
PIP := $(PY) -m pip install -q --disable-pip-version-check

.PHONY: run test lint bench clean system-deps

# `make run` installs the app's extra only; test, lint and bench install the test extra (which holds it).
# --no-compile: Python compiles the modules the app imports when it first imports them, not all of them now.
$(APP_STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) --no-compile -e '.[app]'
	touch $(APP_STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e '.[test]'
	touch $(STAMP) $(APP_STAMP)

# The app with the project's Streamlit settings (.streamlit/config.toml), as an installed `qrelforge serve`.
run: $(APP_STAMP)
	$(VENV)/bin/qrelforge demo-data --with-labels
	$(VENV)/bin/qrelforge serve --host 127.0.0.1 --port $${PORT:-8501}

# The tests drive the app in Debian's Chromium (two replicas behind Debian's nginx in test_e2e_replicas) and
# run the store against the local PostgreSQL server.
system-deps:
	@{ command -v chromium && test -x /usr/sbin/nginx; } >/dev/null 2>&1 || { \
		echo "installing Debian's Chromium and nginx for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		chromium fonts-liberation fonts-noto-cjk nginx >/dev/null; }
	@pg_isready -q -h 127.0.0.1 -p 5432 || pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start \
		|| echo "warning: PostgreSQL is not reachable on 127.0.0.1:5432; the store tests will fail"

# --durations=20: the twenty slowest tests, printed after the summary. Bytecode is cached (`__pycache__`,
# git-ignored) even where PYTHONDONTWRITEBYTECODE is set: the two workers, the app servers and the child
# interpreters of one run then compile each module (and pytest rewrites each test module) once, not each.
test: $(STAMP) system-deps
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -n 2 -q --durations=20

# Lint: ruff (rules + the 110-column limit), the formatter, mypy on metrics/services/store, the import contract.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

bench: $(STAMP)
	$(PIP) -e '.[bench]'
	$(PY) benchmarks/score_large.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
