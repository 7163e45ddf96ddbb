# SPDX-License-Identifier: MIT
# --trace=events' test helper: tev_check reads a timeline the way a trace
# viewer depends on it (tests/cli/trace_events.sh).

TEV_CHECK := $(B)/tests/cli/tev_check
ALL_TARGETS += $(TEV_CHECK)

$(TEV_CHECK): tests/cli/tev_check.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -o $@ $< $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson) -lm

# the builder on records of the test's own (no kernel, no privilege)
EVENTS_TEST := $(B)/tests/test_events
TEST_PROGS += $(EVENTS_TEST)
DEPS_FILES += $(B)/tests/unit/test_events.d

$(B)/tests/unit/test_events.o: CFLAGS += -Isrc/trace

$(EVENTS_TEST): $(B)/tests/unit/test_events.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(IPCLAB_LIB) \
		$(shell pkg-config --libs cmocka jansson 2>/dev/null || echo -lcmocka -ljansson) \
		$(IPCLAB_LIBS) $(LDLIBS)
