# Two entry points, both safe on a fresh Debian machine as root:
#   make demo   install what is missing, then show the gate working
#   make test   install what is missing (and what only the tests use), then lint,
#               type-check and run the suite
#   make dist   the release: sdist and manylinux wheel in dist/ (docs/install.md)
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.shellgate-installed
# What the gate needs (make demo, make test): bubblewrap for the sandbox executor,
# libcap-dev and libseccomp2 for the hardening, gcc and libc6-dev to build the
# sg-exec helper, util-linux for setpriv and prlimit.
APT_PACKAGES := bubblewrap libcap-dev libseccomp2 gcc libc6-dev util-linux
# What only the tests (and the fleet benchmarks) need: postgresql, as the fleet
# stores' tests start a throwaway cluster (initdb + pg_ctl); chromium, for the
# console's browser tests (playwright drives it and never downloads one).
APT_TEST_PACKAGES := postgresql chromium
# pytest-xdist workers. The suite waits a lot (timeouts, servers starting, other
# processes), so one worker more than the 2 cores keeps them busy; tests that
# share anything machine-wide are written to run beside each other.
PYTEST_WORKERS ?= 3

.PHONY: demo test lint typecheck pytest policies bench dist system test-system clean

demo: $(STAMP)
	$(BIN)/shellgate demo

# The four run side by side: mypy (one core for ~30 s on a fresh clone) fits in
# the time pytest's workers spend waiting on the processes they test. Each one's
# output is printed whole when it ends (-O); make pytest alone shows it live.
test: $(STAMP) test-system
	@$(MAKE) --no-print-directory -j 4 -O lint typecheck pytest policies

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples tools hatch_build.py

typecheck: $(STAMP)
	$(BIN)/mypy

# worksteal: a worker that runs dry takes half of the queue of the busiest one,
# so the run does not end on one worker alone with the slow tests it was dealt.
# --durations: every run lists its slowest tests, where a slow new one shows first.
pytest: $(STAMP) test-system
	$(BIN)/pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) --dist worksteal --durations=15

# Each set with the closing default its deployments use (its tests.csv says so):
# the packaged one (sandbox) unless a "# default: X" line names another.
policies: $(STAMP)
	@for d in policies/*/; do \
	  default=$$(sed -n 's/^# default: *\([a-z]*\).*/\1/p' "$$d/tests.csv" | head -1); \
	  $(BIN)/shellgate policy test "$$d" $${default:+--default $$default} || exit 1; \
	done

bench: $(STAMP) test-system
	@for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python "$$b" || exit 1; done

# Built from a clean dist/, so only this build's files are there to upload.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python tools/build_dist.py dist

# System packages: only what is missing, so a machine that has them needs no apt.
apt-missing = missing=""; \
	for p in $(1); do dpkg -s "$$p" >/dev/null 2>&1 || missing="$$missing $$p"; done
apt-install = if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

system:
	@$(call apt-missing,$(APT_PACKAGES)); \
	$(PY) -c 'import ensurepip, venv' 2>/dev/null || missing="$$missing python3-venv"; \
	$(PY) -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' || missing="$$missing python3-dev"; \
	$(apt-install)

test-system:
	@$(call apt-missing,$(APT_TEST_PACKAGES)); $(apt-install)

$(STAMP): pyproject.toml hatch_build.py src/shellgate/executors/_helper/sg-exec.c
	@$(MAKE) --no-print-directory system
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	rm -f src/shellgate/executors/_helper/sg-exec  # left by older builds: it would shadow the new one
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

# The helper is built in a temporary directory and installed into the venv, so
# removing the venv removes it; an sg-exec in src/ is a copy put there by hand
# (or left by an older build) and would shadow the installed one.
clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist src/shellgate/executors/_helper/sg-exec
