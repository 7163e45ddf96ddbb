# SPDX-License-Identifier: MIT
# The ring transports (src/transport/ring.c) call libipcring, so every
# program that links IPCLAB_LIB needs $(IPCRING_A) after it: the test
# programs link $(IPCLAB_LIBS) after IPCLAB_LIB, so it goes there (the
# ipclab binary and tp_direct also name it themselves; twice is harmless).
# Also the issue-4 benchmark helpers run by bench/ring.sh: bench/ring_idle
# (libipcring alone) and bench/ring_layers (the ring transport's ops).

IPCLAB_LIBS += $(IPCRING_A)
$(IPCLAB_LIB): | $(IPCRING_A)

RING_IDLE := $(B)/bench/ring_idle
ALL_TARGETS += $(RING_IDLE)
DEPS_FILES += $(B)/bench/ring_idle.d

$(B)/bench/ring_idle.o: bench/ring_idle.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(RING_IDLE): $(B)/bench/ring_idle.o $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

RING_LAYERS := $(B)/bench/ring_layers
ALL_TARGETS += $(RING_LAYERS)
DEPS_FILES += $(B)/bench/ring_layers.d

$(B)/bench/ring_layers.o: bench/ring_layers.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(RING_LAYERS): $(B)/bench/ring_layers.o $(IPCLAB_LIB) $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(B)/bench/ring_layers.o $(IPCLAB_LIB) $(IPCLAB_LIBS) $(LDLIBS)
