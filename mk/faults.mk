# SPDX-License-Identifier: MIT
# Fault injection. The tests/faults/*.sh scripts are part of `make check`
# (SCRIPT_TESTS, CI-sized counts); here are their helper, the long runs and
# valgrind:
#   make soak      SOAK_KILLS (500) SIGKILLs for every transport x pattern,
#                  SOAK_SIGNALS (500) SIGINT/SIGTERMs, SOAK_STOPS (100) SIGSTOPs
#   make valgrind  memcheck on one short run of every transport, each pattern a cell:
#                  zero errors (installs Debian's valgrind as root if missing)
# FAULT_SEED=N repeats a fault run's random choices.

FAULT_SHIM := $(B)/tests/faults/predictable_names.so
SOAK_KILLS ?= 500
SOAK_SIGNALS ?= 500
SOAK_STOPS ?= 100
VALGRIND_N ?= 200

ALL_TARGETS += $(FAULT_SHIM)

# LD_PRELOAD helper for tests/faults/names.sh: never sanitized (it is
# preloaded into sanitized binaries too), no dependencies.
$(FAULT_SHIM): tests/faults/predictable_names.c
	@mkdir -p $(@D)
	$(CC) -shared -fPIC -O2 -std=gnu11 $(WARN) -o $@ $<

# $(call deb_need,WHO,PACKAGES): install the missing Debian packages (as
# root, with apt-get), or fail saying exactly what to install.
define deb_need
	@missing=""; for p in $(2); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "$(1): installing$$missing"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; } >/dev/null || \
		{ echo "$(1): apt-get install$$missing failed" >&2; exit 1; }; \
	else \
		echo "$(1): needs Debian packages:$$missing; install them with: sudo apt-get install$$missing" >&2; exit 1; \
	fi
endef

.PHONY: soak valgrind valgrind-deps
soak: all
	@FAULT_SOAK=$(SOAK_KILLS) tests/faults/kill_peer.sh
	@FAULT_SIGNALS=$(SOAK_SIGNALS) tests/faults/interrupt.sh
	@FAULT_STOPS=$(SOAK_STOPS) tests/faults/watchdog.sh

valgrind-deps:
	$(call deb_need,valgrind,valgrind)

valgrind: valgrind-deps all
	@VALGRIND_N=$(VALGRIND_N) tests/faults/valgrind.bash
