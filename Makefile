# hedgelab: `make run` sets up and starts the platform; `make test` runs the test suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000
EXTRAS ?= dev
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
comma := ,

.PHONY: install browser migrate demo run web worker test test-postgres check-deploy clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PIP) install --quiet -e ".[$(EXTRAS)]"
	touch $@

install: $(STAMP)

# Debian's Chromium for the browser tests (never a downloaded browser build).
browser:
	@command -v chromium >/dev/null || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

migrate: install
	$(PY) manage.py migrate --noinput -v0

# The links that load_demo and run print point at the server that run starts.
demo run: export SITE_URL ?= http://$(HOST):$(PORT)

demo: migrate
	$(PY) manage.py load_demo

run: demo
	@bash bin/run-platform "$(HOST)" "$(PORT)"

test: install browser
	$(PY) -m pytest $(PYTEST_ARGS)

check-deploy: install
	DEBUG=0 SECRET_KEY=$$(head -c 48 /dev/urandom | base64) ALLOWED_HOSTS=example.org \
	  $(PY) manage.py check --deploy --fail-level WARNING

clean:
	rm -rf $(VENV) var .pytest_cache
