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

# issue 12's minimal reference programs (bench/fidelity_libqb.sh runs them
# against ipclab): a plain libqb ring loop, and a two-line ping-pong
BENCH_REF_CFLAGS := -O2 -Wall -Wextra $(if $(WERROR),-Werror)

$(B)/bench/ref_cacheline: bench/ref_cacheline.c bench/pin.h
	@mkdir -p $(@D)
	$(CC) $(BENCH_REF_CFLAGS) -o $@ $<

ALL_TARGETS += $(B)/bench/ref_cacheline

# what unmapping a 64 KiB connection ring costs here (lib/ipcring/README.md)
$(B)/bench/unmap_cost: bench/unmap_cost.c
	@mkdir -p $(@D)
	$(CC) $(BENCH_REF_CFLAGS) -o $@ $<

ALL_TARGETS += $(B)/bench/unmap_cost

ifeq ($(HAVE_LIBQB),1)
$(B)/bench/ref_libqb_rb: bench/ref_libqb_rb.c bench/pin.h
	@mkdir -p $(@D)
	$(CC) $(BENCH_REF_CFLAGS) $(shell pkg-config --cflags libqb) -o $@ $< $(shell pkg-config --libs libqb)

ALL_TARGETS += $(B)/bench/ref_libqb_rb
endif

bench: all
	bench/fidelity.sh

# issue 12: libqb-rb and cacheline against the minimal programs (~5 min)
.PHONY: bench-libqb
bench-libqb: all
	B=$(B) bench/fidelity_libqb.sh

$(B)/bench/overhead: $(B)/bench/overhead.o $(IPCLAB_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(IPCLAB_LIBS) $(LDLIBS)

$(B)/bench/overhead.o: bench/overhead.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

ALL_TARGETS += $(B)/bench/overhead
