# SPDX-License-Identifier: MIT
# Unit tests of the reporters (table, markdown, JSON, CSV, the field table)
# and of the environment probe: one program. It reads docs/output.md from the
# source tree, whose path it is given at compile time.

REPORT_TEST := $(B)/tests/test_report
REPORT_TEST_OBJS := $(addprefix $(B)/tests/unit/,test_report.o test_report_tables.o report_fixture.o)

TEST_PROGS += $(REPORT_TEST)
DEPS_FILES += $(REPORT_TEST_OBJS:.o=.d)

$(B)/tests/unit/test_report.o: CFLAGS += -DSRCDIR='"$(CURDIR)"'

$(REPORT_TEST): $(REPORT_TEST_OBJS) $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(REPORT_TEST_OBJS) $(IPCLAB_LIB) $(shell pkg-config --libs cmocka jansson) $(IPCLAB_LIBS) $(LDLIBS)
