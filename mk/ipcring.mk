# SPDX-License-Identifier: MIT
# libipcring: static and shared library (soname libipcring.so.1, versioned
# symbols IPCRING_1 to _4), pkg-config file, examples, tests, bare benchmark.
# `make check-ipcring` runs the tests, `make stress` the 10^9-message stress.

IPCRING_DIR	:= lib/ipcring
IPCRING_B	:= $(B)/lib/ipcring
IPCRING_SOVER	:= 1
IPCRING_LIBVER	:= 1.4.0
IPCRING_SRCS	:= $(IPCRING_DIR)/segment.c $(IPCRING_DIR)/map.c \
		   $(IPCRING_DIR)/wait.c $(IPCRING_DIR)/producer.c \
		   $(IPCRING_DIR)/consumer.c $(IPCRING_DIR)/name.c \
		   $(IPCRING_DIR)/client.c $(IPCRING_DIR)/server.c \
		   $(IPCRING_DIR)/dispatch.c $(IPCRING_DIR)/conns.c \
		   $(IPCRING_DIR)/admit.c $(IPCRING_DIR)/reply.c
IPCRING_OBJS	:= $(IPCRING_SRCS:$(IPCRING_DIR)/%.c=$(IPCRING_B)/%.o)
IPCRING_A	:= $(B)/libipcring.a
IPCRING_SO	:= $(B)/libipcring.so
IPCRING_PC	:= $(B)/ipcring.pc
IPCRING_MAP	:= $(IPCRING_DIR)/libipcring.map

IPCRING_TEST_NAMES := unit attach stress death eventfd examples hostile \
		      connect peers dispatch kills batch strangers stuck fair runs
IPCRING_TESTS	:= $(IPCRING_TEST_NAMES:%=$(B)/tests/ipcring-%)
IPCRING_EXAMPLES := $(B)/examples/ipcring-server $(B)/examples/ipcring-client
IPCRING_BENCH	:= $(B)/bench/ring_bare $(B)/bench/ring_setup
IPCRING_XOBJS	:= $(IPCRING_TEST_NAMES:%=$(IPCRING_B)/tests/%.o) \
		   $(IPCRING_B)/tests/tutil.o \
		   $(IPCRING_B)/examples/server.o $(IPCRING_B)/examples/client.o \
		   $(B)/bench/ring_bare.o $(B)/bench/ring_setup.o
IPCRING_STRESS_N ?= 1000000000

ALL_TARGETS	+= $(IPCRING_A) $(IPCRING_SO) $(IPCRING_PC) $(IPCRING_EXAMPLES) \
		   $(IPCRING_TESTS) $(IPCRING_BENCH)
TEST_PROGS	+= $(IPCRING_TESTS) $(IPCRING_DIR)/model/check.sh $(IPCRING_DIR)/tests/man.sh
DEPS_FILES	+= $(IPCRING_OBJS:.o=.d) $(IPCRING_XOBJS:.o=.d)

$(IPCRING_OBJS): $(IPCRING_B)/%.o: $(IPCRING_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -c -o $@ $<

$(IPCRING_XOBJS): $(B)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -I$(IPCRING_DIR) -c -o $@ $<

$(IPCRING_A): $(IPCRING_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(IPCRING_SO): $(IPCRING_OBJS) $(IPCRING_MAP)
	$(CC) -shared $(LDFLAGS) -Wl,-soname,libipcring.so.$(IPCRING_SOVER) \
		-Wl,--version-script=$(IPCRING_MAP) -Wl,-z,defs -o $@ $(IPCRING_OBJS) -lpthread
	ln -sf libipcring.so $(B)/libipcring.so.$(IPCRING_SOVER)

$(IPCRING_PC): $(IPCRING_DIR)/ipcring.pc.in
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(IPCRING_LIBVER)|g' $< > $@

$(B)/tests/ipcring-%: $(IPCRING_B)/tests/%.o $(IPCRING_B)/tests/tutil.o $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/examples/ipcring-%: $(IPCRING_B)/examples/%.o $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/bench/ring_bare: $(B)/bench/ring_bare.o $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# connect to first reply, back to back against spaced apart (alternated)
$(B)/bench/ring_setup: $(B)/bench/ring_setup.o $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# ipcring-transport drives ipclab's ring transports (src/transport/ring.c)
IPCRING_TTEST	:= $(B)/tests/ipcring-transport
ALL_TARGETS	+= $(IPCRING_TTEST)
TEST_PROGS	+= $(IPCRING_TTEST)
IPCRING_XOBJS	+= $(IPCRING_B)/tests/transport.o
DEPS_FILES	+= $(IPCRING_B)/tests/transport.d

$(IPCRING_B)/tests/transport.o: lib/ipcring/tests/transport.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -I$(IPCRING_DIR) -c -o $@ $<

$(IPCRING_TTEST): $(IPCRING_B)/tests/transport.o $(IPCRING_B)/tests/tutil.o $(IPCLAB_LIB) $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(IPCLAB_LIBS) $(LDLIBS)

# the examples test runs the two example programs
$(B)/tests/ipcring-examples: | $(IPCRING_EXAMPLES)

.PHONY: ipcring check-ipcring stress-ipcring install-ipcring
ipcring: $(IPCRING_A) $(IPCRING_SO) $(IPCRING_PC) $(IPCRING_EXAMPLES) \
	 $(IPCRING_TESTS) $(IPCRING_TTEST) $(IPCRING_BENCH)

check-ipcring: ipcring
	@pass=0; fail=0; skip=0; \
	for t in $(IPCRING_TESTS) $(IPCRING_TTEST) $(IPCRING_DIR)/model/check.sh \
		 $(IPCRING_DIR)/tests/man.sh; do \
		timeout 300 $$t > $(B)/$$(basename $$t).log 2>&1; rc=$$?; \
		case $$rc in \
		0) pass=$$((pass+1)); echo "PASS $$t";; \
		77) skip=$$((skip+1)); echo "SKIP $$t: $$(tail -n1 $(B)/$$(basename $$t).log)";; \
		*) fail=$$((fail+1)); echo "FAIL $$t (rc $$rc): $$(tail -n1 $(B)/$$(basename $$t).log)";; \
		esac; \
	done; \
	echo "$$pass passed, $$fail failed, $$skip skipped"; [ $$fail -eq 0 ]

stress: stress-ipcring
stress-ipcring: $(B)/tests/ipcring-stress
	$(B)/tests/ipcring-stress -v -n $(IPCRING_STRESS_N)

IPCRING_LIBDIR	= $(DESTDIR)$(PREFIX)/lib
install: install-ipcring
install-ipcring: $(IPCRING_A) $(IPCRING_SO) $(IPCRING_PC)
	install -d $(DESTDIR)$(PREFIX)/include $(IPCRING_LIBDIR)/pkgconfig
	install -m 644 include/ipcring.h include/ipcring_ipc.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(IPCRING_A) $(IPCRING_LIBDIR)/libipcring.a
	install -m 755 $(IPCRING_SO) $(IPCRING_LIBDIR)/libipcring.so.$(IPCRING_LIBVER)
	ln -sf libipcring.so.$(IPCRING_LIBVER) $(IPCRING_LIBDIR)/libipcring.so.$(IPCRING_SOVER)
	ln -sf libipcring.so.$(IPCRING_SOVER) $(IPCRING_LIBDIR)/libipcring.so
	install -m 644 $(IPCRING_PC) $(IPCRING_LIBDIR)/pkgconfig/ipcring.pc
	install -d $(DESTDIR)$(PREFIX)/share/man/man3
	install -m 644 $(IPCRING_DIR)/man/*.3 $(DESTDIR)$(PREFIX)/share/man/man3/
# (tests/man.sh checks that every exported function has one of those pages)
