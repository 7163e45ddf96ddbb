# SPDX-License-Identifier: MIT
# Fault injection. The tests/faults/*.sh scripts are part of `make check`
# (SCRIPT_TESTS, CI-sized counts); here are their helper, the long runs and
# valgrind:
#   make soak      SOAK_KILLS (500) SIGKILLs for every transport x pattern,
#                  SOAK_SIGNALS (500) SIGINT/SIGTERMs, SOAK_STOPS (100) SIGSTOPs
#   make valgrind  memcheck on one short run of every transport and pattern:
#                  zero errors (installs nothing: needs Debian's valgrind)
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

.PHONY: soak valgrind
soak: all
	@FAULT_SOAK=$(SOAK_KILLS) tests/faults/kill_peer.sh
	@FAULT_SIGNALS=$(SOAK_SIGNALS) tests/faults/interrupt.sh
	@FAULT_STOPS=$(SOAK_STOPS) tests/faults/watchdog.sh

valgrind: all
	@VALGRIND_N=$(VALGRIND_N) tests/faults/valgrind.bash
