# SPDX-License-Identifier: MIT
# tp_direct: every registered transport driven through its ops directly
# (tests/conformance/). msgget/semget/shmget are wrapped so that the test
# knows exactly which SysV objects this process created.

TP_DIRECT := $(B)/tests/tp_direct
TP_DIRECT_OBJS := $(addprefix $(B)/tests/conformance/,tp_direct.o tp_side.o tp_batch.o tp_leftover.o)
TP_DIRECT_WRAP := -Wl,--wrap=msgget -Wl,--wrap=semget -Wl,--wrap=shmget

TEST_PROGS += $(TP_DIRECT)
DEPS_FILES += $(TP_DIRECT_OBJS:.o=.d)

$(B)/tests/conformance/%.o: tests/conformance/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(TP_DIRECT): $(TP_DIRECT_OBJS) $(IPCLAB_LIB) $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $(TP_DIRECT_WRAP) -o $@ $(TP_DIRECT_OBJS) $(IPCLAB_LIB) $(IPCRING_A) \
		$(IPCLAB_LIBS) $(LDLIBS)

# `make SAN=tsan check-threads` runs it too, thread endpoints only.
TSAN_PROGS += $(TP_DIRECT)
