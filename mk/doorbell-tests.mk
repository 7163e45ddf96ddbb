# SPDX-License-Identifier: MIT
# Unit tests of the doorbells (src/doorbell/): every wakeup primitive between
# threads and across fork. `build/tests/test_doorbell futex` runs one.
# This fragment is read before mk/ipclab.mk defines IPCLAB_LIB, so the
# prerequisite list is expanded a second time, when the rule is used.

DOORBELL_TEST := $(B)/tests/test_doorbell
DOORBELL_TEST_OBJ := $(B)/tests/unit/test_doorbell.o

TEST_PROGS += $(DOORBELL_TEST)
DEPS_FILES += $(DOORBELL_TEST_OBJ:.o=.d)

.SECONDEXPANSION:
$(DOORBELL_TEST): $(DOORBELL_TEST_OBJ) $$(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(IPCLAB_LIB) $(shell pkg-config --libs cmocka) $(IPCLAB_LIBS) $(LDLIBS)
