# SPDX-License-Identifier: MIT
# Unit test of the interference arithmetic (src/core/interference.c) on
# made-up /proc/stat snapshots.

$(B)/tests/test_interference: $(B)/tests/unit/test_interference.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_interference
DEPS_FILES += $(B)/tests/unit/test_interference.d
