# SPDX-License-Identifier: MIT
# A result read by what it holds (src/report/rec_cell.c): a record as run
# writes it, and hostile ones (types, lengths). Built by the unit
# programs' pattern rule (mk/tests.mk).
TEST_PROGS += $(B)/tests/test_rec_cell
$(B)/tests/unit/test_rec_cell.o: CFLAGS += -Isrc/report
.SECONDARY: $(B)/tests/unit/test_rec_cell.o
DEPS_FILES += $(B)/tests/unit/test_rec_cell.d
