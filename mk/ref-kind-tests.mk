# SPDX-License-Identifier: MIT
# --reference's loop by the pattern's reference kind, not its name (tests/unit/test_ref_kind.c).

$(B)/tests/test_ref_kind: $(B)/tests/unit/test_ref_kind.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_ref_kind
DEPS_FILES += $(B)/tests/unit/test_ref_kind.d
