# SPDX-License-Identifier: MIT
# The trace and profile parts of a result read back (src/report/rec_trace.c):
# a record as run writes it, and hostile ones (types, lengths, counts).
# Built by the unit programs' pattern rule (mk/tests.mk).
TEST_PROGS += $(B)/tests/test_rec_trace
$(B)/tests/unit/test_rec_trace.o: CFLAGS += -Isrc/report
.SECONDARY: $(B)/tests/unit/test_rec_trace.o
DEPS_FILES += $(B)/tests/unit/test_rec_trace.d
