# Two entry points, both safe on a fresh Debian machine as root:
#   make demo   install what is missing, then show the gate working
#   make test   install what is missing, then lint, type-check and run the suite
#   make dist   the release: sdist and manylinux wheel in dist/ (docs/install.md)
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.shellgate-installed
# postgresql: the fleet stores' tests start a throwaway cluster (initdb + pg_ctl);
# chromium: the console's browser tests (playwright drives it, never downloads one).
APT_PACKAGES := bubblewrap libcap-dev libseccomp2 gcc libc6-dev util-linux postgresql chromium

.PHONY: demo test lint typecheck pytest policies bench dist system clean

demo: $(STAMP)
	$(BIN)/shellgate demo

test: $(STAMP) lint typecheck pytest policies

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples tools hatch_build.py

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -q -p no:cacheprovider

# Each set with the closing default its deployments use (its tests.csv says so):
# the packaged one (sandbox) unless a "# default: X" line names another.
policies: $(STAMP)
	@for d in policies/*/; do \
	  default=$$(sed -n 's/^# default: *\([a-z]*\).*/\1/p' "$$d/tests.csv" | head -1); \
	  $(BIN)/shellgate policy test "$$d" $${default:+--default $$default} || exit 1; \
	done

bench: $(STAMP)
	@for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python "$$b" || exit 1; done

# Built from a clean dist/, so only this build's files are there to upload.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python tools/build_dist.py dist

# System packages: only what is missing, so a machine that has them needs no apt.
system:
	@missing=""; \
	for p in $(APT_PACKAGES); do dpkg -s "$$p" >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	$(PY) -c 'import ensurepip, venv' 2>/dev/null || missing="$$missing python3-venv"; \
	$(PY) -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' || missing="$$missing python3-dev"; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

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
