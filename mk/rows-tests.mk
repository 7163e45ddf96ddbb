# SPDX-License-Identifier: MIT
# A section's rows (tests/unit/test_rows.c): where plan_build puts a cell
# (plan_cell_index), the suite finding its results by their cells, and the
# rows printed through the field table (src/report/rows.c).

$(B)/tests/test_rows: $(B)/tests/unit/test_rows.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_rows
DEPS_FILES += $(B)/tests/unit/test_rows.d
