# dcfair: install, demo, test.  `make help` lists the targets.
#
# Everything installs into one virtualenv: $(VENV) (default .venv here, or the one you have
# activated). `make install` is idempotent: the venv, the Python tools and the extension are
# made only when missing or older than what they are built from (pyproject.toml, every
# Cargo.toml, Cargo.lock, every .rs under crates/); cargo itself then rebuilds only what changed.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

PYTHON ?= python3
VENV ?= $(if $(VIRTUAL_ENV),$(VIRTUAL_ENV),.venv)
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
MATURIN_REQ := maturin>=1.5,<2.0
# Where `maturin develop` puts the extension (abi3: one file for every CPython >= 3.9).
EXT := python/dcfair/_engine.abi3.so
STAMP := $(VENV)/.dcfair-tools
RUST_SRC := Cargo.toml Cargo.lock $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null)
# One release build serves the extension and `cargo test` (see `test-rust`).
CARGO_TEST := cargo test --workspace --release --all-targets
# pyo3's build script looks at the interpreter: name the venv's so that maturin and plain cargo
# agree and do not rebuild pyo3 (and the crates above it) for each other.
export PYO3_PYTHON := $(abspath $(PY))
export PIP_DISABLE_PIP_VERSION_CHECK := 1

DEMO_ARGS ?=

.PHONY: help install demo test test-deps testbed-deps test-rust test-py system peers second-opinions validate validate-outcast validate-ns3 validate-ns3-aqm validate-all claims claims-check bench bench-deps clean distclean

help:
	@echo "make demo       install everything, then compare every discipline on the HCF paper's long flows: out/demo/report.html"
	@echo "make test       install (and chromium for the report's browser test, ns-2 for a second opinion), then cargo test (release) and pytest"
	@echo "make install    venv $(VENV) with the Python deps and the extension (idempotent)"
	@echo "make test-rust  only the Rust tests;  make test-py  only the Python tests"
	@echo "make testbed-deps  install iperf3, ethtool and iproute2 for \`dcfair testbed\` (part of make test)"
	@echo "make peers      install the peer simulators used for validation and benchmarks (ns-2, ns-3)"
	@echo "make validate   rerun dcfair beside ns-2 and refresh docs/validation.md"
	@echo "make validate-outcast  only the TCP Outcast fat-tree beside ns-2 (~5 min; part of validate)"
	@echo "make validate-ns3  rerun dcfair's TCP (NewReno, CUBIC, pacing) beside ns-3 3.37 on a dumbbell and refresh docs/validation.md"
	@echo "make validate-ns3-aqm  FQ-CoDel and DCTCP beside ns-3 3.37 on a dumbbell (~2 CPU-minutes) and refresh docs/validation.md"
	@echo "make validate-all  both"
	@echo "make claims     every reproduction in full with every reading it declares, then every claims table and docs/claims.md"
	@echo "make second-opinions  every reproduction a peer simulator can run, rerun in it (after make claims), then docs/claims.md"
	@echo "make bench      time dcfair beside ns-2 (HCF long flows, k=8 fat-tree) and ns-3 (pFabric fabric) and refresh docs/performance.md"
	@echo "make bench-deps install valgrind, for bench/instructions.py and bench/misses.py (instructions and cache misses, counted)"
	@echo "make clean      remove the built extension and cargo's target/;  make distclean  also .venv and out/"

install: $(EXT)

# System packages: only what the build needs and may lack on a fresh Debian machine. Installed
# with apt-get when running as root; otherwise we say what to install and stop.
system:
	@missing=""; \
	if ! command -v $(PYTHON) >/dev/null; then missing="python3 python3-venv python3-pip"; \
	elif ! $(PYTHON) -c 'import venv, ensurepip' 2>/dev/null; then missing="python3-venv python3-pip"; fi; \
	command -v cc >/dev/null || missing="$${missing:+$$missing }gcc libc6-dev"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "==> apt-get install $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	  else echo "dcfair: please install:$$missing" >&2; exit 1; fi; \
	fi; \
	command -v cargo >/dev/null || { echo "dcfair: cargo not found: install a Rust toolchain (rustup) first" >&2; exit 1; }

$(PY):
	@$(MAKE) system
	@echo "==> virtualenv $(VENV)"
	$(PYTHON) -m venv $(VENV)

# The build and test tools; the runtime dependencies come with the package (maturin develop).
$(STAMP): pyproject.toml | $(PY)
	@echo "==> Python tools into $(VENV)"
	$(PIP) install -q --progress-bar off "$(MATURIN_REQ)"
	touch $@

$(EXT): $(RUST_SRC) pyproject.toml $(STAMP)
	@echo "==> extension dcfair._engine (release build) and the package, editable, with its dependencies"
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --extras test,ray
	touch $@
	$(PY) -c 'import dcfair._engine as e; print("    dcfair._engine", e.version(), "->", e.__file__)'

demo: install
	$(PY) -m dcfair.demo $(DEMO_ARGS)

test: install test-deps test-rust test-py

# What only the tests need from Debian: a headless browser and its WebDriver to open the HTML
# report and click through it (tests/test_report.py, tests/test_report_browser.py). Installed with apt-get when missing and running as root; otherwise,
# or if apt-get fails, the browser tests skip and say why.
test-deps:
	@if ! command -v chromedriver >/dev/null || { ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; }; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "==> apt-get install chromium chromium-driver (for the report's browser tests)"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null; } \
	      || echo "dcfair: could not install chromium; the browser tests will be skipped" >&2; \
	  else echo "dcfair: chromium or chromedriver not found (Debian packages chromium, chromium-driver); the report's browser tests will be skipped" >&2; fi; \
	fi
	@$(MAKE) testbed-deps
	@# ns-2 for the one second opinion the tests run against a real peer (tests/test_peers_ns2.py);
	@# unlike the browser and the testbed, a test suite without it fails: it is not optional.
	@if ! command -v ns >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "==> apt-get install ns2 (for the second opinion of the tests)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ns2 >/dev/null; \
	  else echo "dcfair: please install the Debian package ns2 (the tests run a second opinion in ns-2)" >&2; exit 1; fi; \
	fi

# What the testbed (`dcfair testbed`, tests/test_testbed.py) and the real-packet switch's netns test
# (crates/switch/tests/netns.rs) need from Debian: iperf3 for the flows, ethtool for the offloads,
# iproute2 for namespaces and veths. Installed when missing and
# running as root; otherwise the testbed's integration tests skip and say why.
TESTBED_PKGS := iperf3 ethtool iproute2
testbed-deps:
	@missing=""; \
	for p in $(TESTBED_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$${missing:+$$missing }$$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "==> apt-get install $$missing (for the testbed)"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; } \
	      || echo "dcfair: could not install $$missing; the testbed tests will be skipped" >&2; \
	  else echo "dcfair: missing Debian packages $$missing; the testbed tests will be skipped" >&2; fi; \
	fi

# Release, like the extension, so that the dependencies (serde, toml, rand, ...) and the library
# crates are compiled once for both; only the dev-dependencies and the test harnesses are extra.
# Measured on this 2-core machine after a cold `make install`: `cargo test --release` 1m17s,
# `cargo test` (test profile) 4m22s, a full second compile of everything. CI and fresh machines
# always start cold. (For a quick inner loop on one crate, `cargo test -p dcfair-sim` is fine.)
test-rust:
	@echo "==> $(CARGO_TEST)"
	$(CARGO_TEST)
	@# the engine-only driver the benchmark and validation tests call
	cargo build --release -p dcfair-sim --example simrun

test-py: install
	@echo "==> pytest"
	$(PY) -m pytest -q tests

# Peer simulators for validation, second opinions and benchmarks, installed when missing:
# ns-2 (the `ns` command) and ns-3 3.37 (the library and its headers; validation/ns3/ compiles
# its own programs against them with pkg-config and g++), from Debian; then the project's build
# of ns-2.35 with its own modules (HCF, FairQ: validation/ns2/build.py, from Debian's source
# tarball; about 4 minutes on 2 cores the first time, nothing when up to date). ns2-xpass and
# htsim are fetched and built by the user (docs/validation.md, "Second opinions").
NS3_PKGS := ns3 libns3-dev pkg-config g++
NS2_BUILD_PKGS := g++ make tcl-dev libotcl1-dev libtclcl1-dev tclcl
peers:
	@if ! command -v ns >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "==> apt-get install ns2"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ns2; \
	  else echo "dcfair: please install the Debian package ns2" >&2; exit 1; fi; \
	fi
	@missing=""; \
	for p in $(NS3_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$${missing:+$$missing }$$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "==> apt-get install $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	  else echo "dcfair: please install the Debian packages: $$missing" >&2; exit 1; fi; \
	fi
	@missing=""; \
	for p in $(NS2_BUILD_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$${missing:+$$missing }$$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "==> apt-get install $$missing (to build ns-2.35 with the project's modules)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	  else echo "dcfair: please install the Debian packages: $$missing" >&2; exit 1; fi; \
	fi
	$(PYTHON) validation/ns2/build.py

validate: install peers
	cargo build --release -p dcfair-sim --example simrun
	$(PY) validation/ns2/run_ns2.py
	$(PY) validation/ns2/run_dcfair.py
	$(PY) validation/ns2/compare.py --doc docs/validation.md
	@$(MAKE) validate-outcast

# The TCP Outcast fat-tree (case I and section 5's queues) beside ns-2: 6 variants x 5 seeds each.
validate-outcast: install peers
	cargo build --release -p dcfair-sim --example simrun
	$(PY) validation/ns2/run_outcast.py
	$(PY) validation/ns2/run_dcfair_outcast.py
	$(PY) validation/ns2/compare_outcast.py --doc docs/validation.md

# The ns-3 comparison (validation/ns3/README.md) is kept out of `validate`: its 28 ns-3 runs
# take about 8 CPU-minutes, 15-40 minutes of wall time here, on top of ns-2's 20 runs. Its scripts need only Python 3.11's
# standard library, not the venv. NS3_JOBS ns-3 processes run at a time.
NS3_JOBS ?= 2
validate-ns3: peers
	cargo build --release -p dcfair-sim --example simrun
	cargo build --release -p dcfair-sim --features trace --example simtrace
	$(PYTHON) validation/ns3/run_ns3.py -j $(NS3_JOBS)
	$(PYTHON) validation/ns3/run_dcfair.py
	$(PYTHON) validation/ns3/compare.py --doc docs/validation.md

# FQ-CoDel and DCTCP beside ns-3 (validation/ns3/README.md, "FQ-CoDel and DCTCP"): 2 cases x
# 3 seeds on each side, about 2 CPU-minutes. Standard library Python only.
validate-ns3-aqm: peers
	cargo build --release -p dcfair-sim --example simrun
	$(PYTHON) validation/ns3/run_aqm.py -j $(NS3_JOBS) --doc docs/validation.md

validate-all: validate validate-ns3

# Every reproduction in its full form, with every alternative reading it declares (--explore),
# then every claims table of docs/mechanisms/ and docs/claims.md from their claims.json. Finished
# runs are reused (out/reproduce/runs, keyed by the engine build and input files), so a second
# `make claims` on the same build only redraws. docs/claims.md gives the CPU time of a cold run.
claims: install
	$(VENV)/bin/dcfair reproduce all --explore
	$(PY) validation/claims_table.py

# Second opinions (docs/validation.md, "Second opinions"): every peer that is installed runs every
# reproduction it has a runner for (dcfair reproduce all --peer PEER, cached in
# out/reproduce/runs@PEER), then the claims pages are redrawn with each claim's second opinion.
second-opinions: claims peers
	$(PY) validation/second_opinions.py
	$(PY) validation/claims_table.py

# Fails (exit 1) when a generated claims section differs from its claims.json (stale docs).
claims-check: install
	$(PY) validation/claims_table.py --check

# The whole-run benchmarks, each dcfair beside a peer in the same session (about 40 minutes on
# 2 shared cores, most of it ns-2 on the fat-tree and ns-3 on the pFabric fabric): the HCF long
# flows through the `dcfair` command, the k=8 fat-tree and the pFabric fabric through the engine
# alone (simrun).
# valgrind, for bench/instructions.py (per-packet instructions of two builds, exact) and
# bench/misses.py (cache misses per event, counted).
bench-deps:
	@if ! command -v valgrind >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "==> apt-get install valgrind"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind; \
	  else echo "dcfair: please install the Debian package valgrind" >&2; exit 1; fi; \
	fi

bench: install peers bench-deps
	cargo build --release -p dcfair-sim --example simrun
	$(PY) bench/longflows.py --reps 3
	$(PY) bench/fattree.py --reps 3
	$(PY) bench/pfabric.py

clean:
	rm -f $(EXT) $(STAMP)
	cargo clean

distclean: clean  # removes our .venv only, never a virtualenv you activated
	rm -rf .venv out .pytest_cache
