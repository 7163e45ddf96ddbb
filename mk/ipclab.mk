# SPDX-License-Identifier: MIT
# The ipclab binary and IPCLAB_LIB, an archive of every src/ object except
# main.c that the test programs link against.

# A plugin's room (src/pattern/NAME/) and its subfolders by layer
# (src/pattern/NAME/report/, .../suite/: src/pattern/README.md).
IPCLAB_SRCS := $(sort $(wildcard src/*.c src/*/*.c src/pattern/*/*.c src/pattern/*/*/*.c \
	src/transport/*/*.c src/transport/*/*/*.c))
IPCLAB_OBJS := $(IPCLAB_SRCS:%.c=$(B)/%.o)
IPCLAB_LIB_OBJS := $(filter-out $(B)/src/main.o,$(IPCLAB_OBJS))

ALL_TARGETS += $(IPCLAB_BIN) ipclab
DEPS_FILES += $(IPCLAB_OBJS:.o=.d)

$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(IPCLAB_LIB): $(IPCLAB_LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# ipcring is linked in for the ring transport when its fragment defines it.
$(IPCLAB_BIN): $(B)/src/main.o $(IPCLAB_LIB) $(IPCRING_A)
	$(CC) $(LDFLAGS) -o $@ $(B)/src/main.o $(IPCLAB_LIB) $(IPCRING_A) $(IPCLAB_LIBS) $(LDLIBS)

# ./ipclab at the top of the tree, for the README's examples.
ipclab: $(IPCLAB_BIN)
	@ln -sf $(IPCLAB_BIN) ipclab
.PHONY: ipclab

run: deps
	@$(MAKE) $(SUBMAKE_J) --no-print-directory all
	./$(IPCLAB_BIN)

# TEST_JOBS tests at once (tests/run-tests.sh): each runs in namespaces of
# its own and checks behaviour, not speed. What each test cost (result,
# wall and CPU seconds) goes to $(B)/test-times.tsv (docs/testing.md).
#
# Under a sanitizer (SAN=...) the time goes where a sanitizer finds bugs:
# every C unit program and fuzz replay as in the plain check, the shell
# tests at a quarter of their counts (IPCLAB_TEST_SCALE), the fault scripts
# with fewer kills, signals and stops (the same paths), kill_parent.sh and
# names.sh over 12 of the transports drawn at random, exhaustion.sh's
# descriptor limit 16 only for every transport, and none of the
# tests in tests/sanitizer-skip (measured by make cover-select: the kept
# tests run every line they run, or they add under 0.5 lines a CPU second;
# each with its figures). A variable set in the environment
# wins over these.
TEST_JOBS ?= 2
ifneq ($(SAN),)
CHECK_ENV := IPCLAB_TEST_SCALE=$${IPCLAB_TEST_SCALE:-25} FAULT_KILLS=$${FAULT_KILLS:-8} \
	FAULT_SIGNALS=$${FAULT_SIGNALS:-8} FAULT_STOPS=$${FAULT_STOPS:-3} \
	FAULT_PATTERNS=$${FAULT_PATTERNS:-stream} FAULT_TRANSPORT_SAMPLE=$${FAULT_TRANSPORT_SAMPLE:-12} \
	FAULT_NOFILE_LIMITS="$${FAULT_NOFILE_LIMITS:-16}" TEST_SKIP=$${TEST_SKIP-tests/sanitizer-skip}
endif
check: deps
	@$(MAKE) $(SUBMAKE_J) --no-print-directory all tests
	@$(CHECK_ENV) TEST_JOBS=$(TEST_JOBS) TEST_TIMES=$(B)/test-times.tsv \
		TEST_WAITING="$${TEST_WAITING-$(CHECK_WAITING)}" tests/run-tests.sh $(CHECK_TESTS)


install: $(IPCLAB_BIN)
	install -D -m 0755 $(IPCLAB_BIN) $(DESTDIR)$(PREFIX)/bin/ipclab
	install -D -m 0644 docs/ipclab.1 $(DESTDIR)$(PREFIX)/share/man/man1/ipclab.1 2>/dev/null || true
