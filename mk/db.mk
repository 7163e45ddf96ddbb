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

# Results per second into SQLite and PostgreSQL (bench/db_write.sh).
.PHONY: bench-db
bench-db: all
	B=$(B) bench/db_write.sh

# The change-point method's false alarms and detection delay on synthetic
# series (bench/changepoint.c): `make bench-changepoint`.
$(B)/bench/changepoint: $(B)/bench/changepoint.o $(IPCLAB_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(IPCLAB_LIBS) $(LDLIBS)

$(B)/bench/changepoint.o: bench/changepoint.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

ALL_TARGETS += $(B)/bench/changepoint
DEPS_FILES += $(B)/bench/changepoint.d

.PHONY: bench-changepoint
bench-changepoint: $(B)/bench/changepoint
	$(B)/bench/changepoint

# URLs (passwords as ***) and labels of the store.
DB_TEST := $(B)/tests/test_db
TEST_PROGS += $(DB_TEST)
DEPS_FILES += $(B)/tests/unit/test_db.d

$(B)/tests/unit/test_db.o: CFLAGS += -Isrc/db

$(DB_TEST): $(B)/tests/unit/test_db.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)
