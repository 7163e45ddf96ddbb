# SPDX-License-Identifier: MIT
# The unit programs, the CLI/conformance scripts, and the thread tests.

CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

$(B)/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

# One rule for the unit programs: tests/unit/test_NAME.c, linked with
# cmocka against IPCLAB_LIB and libipcring, is $(B)/tests/test_NAME. A new
# one is a name in UNIT_TESTS (here, or `UNIT_TESTS += NAME` and the two
# lines below it in a fragment of its own); its extra objects are
# prerequisites of the program, its extra flags target-specific CFLAGS of
# its object (as for report and compare_stats below). A program with a
# rule of its own (mk/db.mk, mk/trace.mk, ...) keeps it: an explicit rule
# wins over this pattern.
$(B)/tests/test_%: $(B)/tests/unit/test_%.o $(IPCLAB_LIB) $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(IPCLAB_LIB) $(IPCRING_A) \
		$(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

# core: the engine's pieces; plan: plan_build; list: `ipclab list` groups
# by group, not names; pattern_own: a pattern's own knobs and results;
# ref_kind: --reference's loop by the pattern's reference kind; rows: a
# section's rows (plan_cell_index, rows through the field table); why: the
# suite's readings from the trace on made-up records; question: each seed
# section's question, tested, on made-up records; cleanup: the cleanup
# table and the run registry; topology: the topology reader and the matrix
# on fake sysfs trees; interference: its arithmetic on made-up /proc/stat
# snapshots and its record; envcheck: env --check on fake sysfs and procfs;
# serve_req: ipclab serve's request decoding; remote_side: a side's record
# between hosts; stats: the statistics over repetitions; compare_stats:
# compare's test over the repetitions; compare_runs: compare at the level
# of runs; report: the reporters, the field table and the environment probe (reads docs/output.md); doorbell: every
# wakeup primitive between threads and across fork (`test_doorbell futex`
# runs one); figure: the figure model of the page and of plot, and both
# back ends drawing it (src/report/figure.c).
UNIT_TESTS := core plan list pattern_own ref_kind rows why question cleanup topology \
	interference envcheck serve_req remote_side stats compare_stats compare_runs report doorbell \
	figure
TEST_PROGS += $(UNIT_TESTS:%=$(B)/tests/test_%)
# made through the pattern rule, the objects would be intermediate files
# that make deletes after each build (and so compiles again the next time)
.SECONDARY: $(UNIT_TESTS:%=$(B)/tests/unit/test_%.o)
DEPS_FILES += $(UNIT_TESTS:%=$(B)/tests/unit/test_%.d) \
	$(B)/tests/unit/report_fixture.d $(B)/tests/unit/test_report_tables.d

$(B)/tests/test_interference: $(B)/tests/unit/report_fixture.o
$(B)/tests/test_report: $(B)/tests/unit/test_report_tables.o $(B)/tests/unit/report_fixture.o
$(B)/tests/unit/test_report.o: CFLAGS += -DSRCDIR='"$(CURDIR)"'
$(B)/tests/unit/test_compare_stats.o: CFLAGS += -Isrc/report
$(B)/tests/unit/test_compare_runs.o: CFLAGS += -Isrc/report
$(B)/tests/unit/test_figure.o: CFLAGS += -Isrc/report

# Scripts run against the built binary ($IPCLAB).
# The fault scripts first: they are the longest, and with TEST_JOBS > 1 the
# short ones fill in beside them.
SCRIPT_TESTS := $(sort $(wildcard tests/faults/*.sh)) \
		$(sort $(wildcard tests/cli/*.sh tests/conformance/*.sh))
export IPCLAB := $(abspath $(IPCLAB_BIN))

# The order `make check` starts its tests in (tests/run-tests.sh runs
# TEST_JOBS at once, in the order given). First those that mostly wait
# (CHECK_WAITING, the runner's TEST_WAITING): they run beside the TEST_JOBS
# others instead of holding a place (fleet_ansible.sh: about 400 s wall
# for 150 CPU s, ssh round trips and Ansible's plays; serve_hostile.sh:
# 66 s for 17, a client that never reads held for 90 s; foreign_drip.sh:
# 20 s for 4, a byte every 1.8 s). Then the longest,
# by CPU s in CI's make check and its ASan+UBSan stage (docs/testing.md),
# so that none of them starts last with the CPUs otherwise idle; the short
# ones fill in beside them. Then everything else as listed above.
CHECK_WAITING := tests/cli/fleet_ansible.sh tests/cli/serve_hostile.sh tests/cli/foreign_drip.sh
CHECK_FIRST = $(TP_DIRECT) tests/faults/exhaustion.sh tests/faults/kill_parent.sh \
	tests/conformance/engine.sh tests/faults/kill_peer.sh tests/cli/plot_compare_env.sh \
	tests/faults/names.sh tests/cli/suite_trace.sh tests/faults/interrupt.sh \
	tests/cli/dbus.sh tests/cli/db_store.sh tests/cli/peer.sh tests/cli/reference.sh \
	tests/cli/trace_labels.sh
CHECK_TESTS = $(CHECK_WAITING) $(CHECK_FIRST) \
	$(filter-out $(CHECK_WAITING) $(CHECK_FIRST),$(SCRIPT_TESTS) $(TEST_PROGS))

# Thread-mode tests under TSan: `make SAN=tsan check-threads`. TSan cannot
# see across processes, so only thread endpoints are run here, at a quarter
# of the plain check's counts (IPCLAB_TEST_SCALE, as make check under a
# sanitizer): the same code paths and interleavings of every transport.
# It builds only what it runs (the binary and TSAN_PROGS, not every unit
# program and tool under TSan) and runs its two tests at once.
TSAN_PROGS ?=
check-threads-build: deps
	@$(MAKE) $(SUBMAKE_J) --no-print-directory $(IPCLAB_BIN) $(TSAN_PROGS)
check-threads: check-threads-build
	@ENDPOINTS=thread TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
		IPCLAB_TEST_SCALE=$${IPCLAB_TEST_SCALE:-25} TEST_JOBS=$${TEST_JOBS:-2} \
		TEST_TIMES=$(B)/test-times-threads.tsv tests/run-tests.sh $(TSAN_PROGS) tests/conformance/engine.sh
.PHONY: check-threads check-threads-build

# check-build: what `make check` builds (all and tests), without the
# ./ipclab link at the top of the tree. .ci/run builds the sanitizer trees
# this way beside the plain check's tests, which must keep seeing the tree
# as it was (deploy/ansible packs it, link included, and compares).
check-build: deps
	@$(MAKE) $(SUBMAKE_J) --no-print-directory $(filter-out ipclab,$(ALL_TARGETS)) tests
.PHONY: check-build

# cover-select: which lines of ipclab's code each test of make check runs
# (a --coverage build in build-cov/, the tests as under a sanitizer), and
# which shell tests the sanitizer stages need to run all of them
# (tests/cover-select.sh; docs/testing.md: tests/sanitizer-skip is made
# from it). Minutes: every test runs once.
cover-select: deps
	tests/cover-select.sh
.PHONY: cover-select
