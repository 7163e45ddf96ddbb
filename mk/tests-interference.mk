# SPDX-License-Identifier: MIT
# Unit test of the interference arithmetic (src/core/interference.c) on
# made-up /proc/stat snapshots, and of its record in the reports.

INTF_TEST_OBJS := $(addprefix $(B)/tests/unit/,test_interference.o report_fixture.o)

$(B)/tests/test_interference: $(INTF_TEST_OBJS) $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(INTF_TEST_OBJS) $(IPCLAB_LIB) $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_interference
DEPS_FILES += $(B)/tests/unit/test_interference.d

# ipclab env --check against fake sysfs and procfs trees
$(B)/tests/test_envcheck: $(B)/tests/unit/test_envcheck.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_envcheck
DEPS_FILES += $(B)/tests/unit/test_envcheck.d
