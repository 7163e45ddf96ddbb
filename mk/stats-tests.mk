# SPDX-License-Identifier: MIT
# Unit test of the statistics over repetitions (src/metrics/stats.c): the
# median's interval, the rank test, the ratio's interval, bimodality.

STATS_TEST := $(B)/tests/test_stats
STATS_TEST_OBJS := $(B)/tests/unit/test_stats.o

TEST_PROGS += $(STATS_TEST)
DEPS_FILES += $(STATS_TEST_OBJS:.o=.d)

$(STATS_TEST): $(STATS_TEST_OBJS) $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(STATS_TEST_OBJS) $(IPCLAB_LIB) $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

# compare's test over the repetitions, on result files it writes itself
CMP_STATS_TEST := $(B)/tests/test_compare_stats
CMP_STATS_TEST_OBJS := $(B)/tests/unit/test_compare_stats.o

TEST_PROGS += $(CMP_STATS_TEST)
DEPS_FILES += $(CMP_STATS_TEST_OBJS:.o=.d)

$(CMP_STATS_TEST_OBJS): CFLAGS += -Isrc/report

$(CMP_STATS_TEST): $(CMP_STATS_TEST_OBJS) $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(CMP_STATS_TEST_OBJS) $(IPCLAB_LIB) $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)
