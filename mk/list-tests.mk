# SPDX-License-Identifier: MIT
# `ipclab list` groups transports by their group, not their names (tests/unit/test_list.c).

$(B)/tests/test_list: $(B)/tests/unit/test_list.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_list
DEPS_FILES += $(B)/tests/unit/test_list.d
