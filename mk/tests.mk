# SPDX-License-Identifier: MIT
# The lead's tests: core unit tests and the CLI/conformance scripts.

CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

$(B)/tests/test_core: $(B)/tests/unit/test_core.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

$(B)/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

TEST_PROGS += $(B)/tests/test_core
DEPS_FILES += $(B)/tests/unit/test_core.d

# Scripts run against the built binary ($IPCLAB).
# The fault scripts first: they are the longest, and with TEST_JOBS > 1 the
# short ones fill in beside them.
SCRIPT_TESTS := $(sort $(wildcard tests/faults/*.sh)) \
		$(sort $(wildcard tests/cli/*.sh tests/conformance/*.sh))
export IPCLAB := $(abspath $(IPCLAB_BIN))

# Thread-mode tests under TSan: `make SAN=tsan check-threads`. TSan cannot
# see across processes, so only thread endpoints are run here, at a quarter
# of the plain check's counts (IPCLAB_TEST_SCALE, as make check under a
# sanitizer): the same code paths and interleavings of every transport.
TSAN_PROGS ?=
check-threads: deps
	@$(MAKE) $(SUBMAKE_J) --no-print-directory all tests
	@ENDPOINTS=thread TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
		IPCLAB_TEST_SCALE=$${IPCLAB_TEST_SCALE:-25} \
		TEST_TIMES=$(B)/test-times-threads.tsv tests/run-tests.sh $(TSAN_PROGS) tests/conformance/engine.sh
.PHONY: check-threads

$(B)/tests/test_plan: $(B)/tests/unit/test_plan.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_plan
DEPS_FILES += $(B)/tests/unit/test_plan.d
