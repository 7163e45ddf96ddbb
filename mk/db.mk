# SPDX-License-Identifier: MIT
# The results store (src/db/) and history: the change-point unit test.

CP_TEST := $(B)/tests/test_changepoint
TEST_PROGS += $(CP_TEST)
DEPS_FILES += $(B)/tests/unit/test_changepoint.d

$(B)/tests/unit/test_changepoint.o: CFLAGS += -Isrc/report

$(CP_TEST): $(B)/tests/unit/test_changepoint.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)
