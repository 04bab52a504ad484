# Two commands: `make run [PROFILE=smoke|default|full]` and `make test`.
PYTHON  ?= $(shell command -v python3.11 || command -v python3)
PROFILE ?= default
# Test processes (pytest-xdist): JOBS=2 runs two, the smoke pipelines' tests on one of them while the other takes the
# rest (tests/conftest.py). One by default: in two trials with two workers the shared Prefect server refused or did
# not answer for seconds to minutes, failing a stage, a cause not yet found (docs/testing.md).
JOBS    ?= 1
WORKERS := $(if $(filter 1,$(JOBS)),,-n $(JOBS) --dist loadgroup)
VENV    := .venv
BIN     := $(CURDIR)/$(VENV)/bin
STAMP   := $(VENV)/.installed
export PATH := $(BIN):$(PATH)
export DO_NOT_TRACK := true
export MLFLOW_DISABLE_TELEMETRY := true
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export DVC_NO_ANALYTICS := 1

.PHONY: install browser run test test-unit test-slow server-start server-stop benchmark gpu-check lock clean image base-image

install: $(STAMP)

# The pinned environment: requirements.lock is the full resolved set (regenerate with `make lock`).
$(STAMP): requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -r requirements.lock
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/python -m tasks.sync.aot  # the DQ kernels compiled ahead of time (tasks/sync/aot.py: one-shot solves skip numba's JIT)
	touch $(STAMP)

# Reproduce every registered paper at PROFILE, print the claims table and where to browse.
run: install
	$(BIN)/papers run all --profile $(PROFILE)

# Start the local Prefect server unless one answers, run the tests, stop it again if we started it.
# Debian's headless Chromium, for the claims page's browser test (root, as CI runs; elsewhere install it yourself,
# or the test skips and says why).
CHROMIUM := /usr/bin/chromium
browser:
	@[ -x $(CHROMIUM) ] || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  { apt-get install -y -qq chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }; }; } || \
	  echo "chromium is not installed: the claims page's browser test will skip"

test: install browser
	@started=0; \
	if ! $(BIN)/papers server status >/dev/null 2>&1; then $(BIN)/papers server start && started=1; fi; \
	$(BIN)/python -m pytest -q $(WORKERS) -m "not slow" --timeout 900 --durations=30; rc=$$?; \
	if [ $$started = 1 ]; then $(BIN)/papers server stop; fi; \
	exit $$rc

# No services: leaves out the slow tests, the integration ones (those using the Prefect server, the smoke
# pipelines or a stage-running copy of the repository; tests/conftest.py marks them) and the heavy ones (long
# cases that `make test` still runs).
test-unit: install
	$(BIN)/python -m pytest -q $(WORKERS) -m "not slow and not integration and not heavy" --timeout 900 --durations=20

test-slow: install
	$(BIN)/python -m pytest -q -m slow

server-start: install
	$(BIN)/papers server start

server-stop: install
	$(BIN)/papers server stop

benchmark: install
	$(BIN)/papers server start
	$(BIN)/python -m benchmarks

# On a GPU runner (with a package index): the cuda LBM engine, its extra installed, against the torch
# solver on the GPU, then the LBM benchmark's rows with the GPU cases (share of the H200's 4.8 TB/s).
gpu-check: install
	$(BIN)/pip install --quiet -e ".[gpu]"
	$(BIN)/python -m pytest -q tests/cfd/test_fused_cuda.py
	$(BIN)/python -m benchmarks.lbm_speed

# The container image localhost/papers:$(TORCH) (podman; base and pip sources chosen for this machine, see
# stages/container.py); base-image makes the Debian-mirror base that `image` uses when no registry answers.
TORCH ?= cpu
image:
	$(PYTHON) -m stages.container build --torch $(TORCH)

base-image:
	$(PYTHON) -m stages.container base

lock:
	rm -rf /tmp/papers-lock && $(PYTHON) -m venv /tmp/papers-lock
	/tmp/papers-lock/bin/pip install --quiet -r requirements.in
	/tmp/papers-lock/bin/pip freeze --exclude-editable | sed 's/^torch==\(.*\)+cpu$$/torch==\1/' > requirements.lock

clean:
	rm -rf $(VENV) .prefect mlflow

# The team profile (docs/team.md) as two local accounts with a checkout each: needs root, Debian's postgresql and
# rclone and the pip packages of requirements-team.txt (installed here when missing); about 10 minutes.
.PHONY: test-team
test-team: install
	@[ "$$(id -u)" = 0 ] || { echo "make test-team creates two local accounts: run it as root"; exit 1; }
	@{ command -v rclone >/dev/null && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; } || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    postgresql rclone >/dev/null; }
	$(BIN)/pip install --quiet -r requirements-team.txt
	$(BIN)/python -m pytest -q --timeout 1200 --durations=10 tests/team
