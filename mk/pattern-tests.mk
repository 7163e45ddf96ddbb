# SPDX-License-Identifier: MIT
# A pattern's own knobs and results through its hooks (tests/unit/test_pattern_own.c).

$(B)/tests/test_pattern_own: $(B)/tests/unit/test_pattern_own.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_pattern_own
DEPS_FILES += $(B)/tests/unit/test_pattern_own.d
