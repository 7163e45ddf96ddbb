# SPDX-License-Identifier: MIT
# The cleanup table and the run registry (tests/unit/test_cleanup.c).

$(B)/tests/test_cleanup: $(B)/tests/unit/test_cleanup.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_cleanup
DEPS_FILES += $(B)/tests/unit/test_cleanup.d
