# SPDX-License-Identifier: MIT
# The results store (src/db/) and history: the change-point unit test, and
# the LD_PRELOAD helper of tests/cli/db_*.sh that holds a run's transaction
# open (never sanitized: it is preloaded into sanitized binaries too).

CP_TEST := $(B)/tests/test_changepoint
TEST_PROGS += $(CP_TEST)
DEPS_FILES += $(B)/tests/unit/test_changepoint.d

$(B)/tests/unit/test_changepoint.o: CFLAGS += -Isrc/report

$(CP_TEST): $(B)/tests/unit/test_changepoint.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

DB_HOOK := $(B)/tests/cli/db_hook.so
ALL_TARGETS += $(DB_HOOK)

$(DB_HOOK): tests/cli/db_hook.c
	@mkdir -p $(@D)
	$(CC) -shared -fPIC -O2 -std=gnu11 $(WARN) -o $@ $< -ldl
