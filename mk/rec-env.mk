# SPDX-License-Identifier: MIT
# rec_env: a result file's run-level keys and env read back (src/report/rec_env.c).
TEST_PROGS += $(B)/tests/test_rec_env
.SECONDARY: $(B)/tests/unit/test_rec_env.o
DEPS_FILES += $(B)/tests/unit/test_rec_env.d
$(B)/tests/unit/test_rec_env.o: CFLAGS += -Isrc/report
