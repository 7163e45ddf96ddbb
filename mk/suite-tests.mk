# SPDX-License-Identifier: MIT
# The suite's readings from the trace (src/cmd/suite_why.c) on made-up records.

$(B)/tests/test_why: $(B)/tests/unit/test_why.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_why
DEPS_FILES += $(B)/tests/unit/test_why.d
