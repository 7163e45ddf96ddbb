# SPDX-License-Identifier: MIT
# Side-by-side benchmarks (never part of `make check`): `make bench`.
$(B)/bench/pipe_loop: bench/pipe_loop.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -o $@ $<

ALL_TARGETS += $(B)/bench/pipe_loop

# the floor for small-message streaming through a ring (no library)
$(B)/bench/ring_floor: bench/ring_floor.c bench/pin.h
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -pthread -o $@ $<

ALL_TARGETS += $(B)/bench/ring_floor

bench: all
	bench/fidelity.sh

$(B)/bench/overhead: $(B)/bench/overhead.o $(IPCLAB_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(IPCLAB_LIBS) $(LDLIBS)

$(B)/bench/overhead.o: bench/overhead.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

ALL_TARGETS += $(B)/bench/overhead
