# SPDX-License-Identifier: MIT
# Fuzzing (fuzz/): libFuzzer harnesses for ipcring's attach path and its
# records, for the parsers, for the control connection of serve/--peer, and
# for the gnuplot scripts ipclab plot makes of a hostile result file and
# the report's flame graph of a hostile folded stacks file.
#   make fuzz      builds them with clang, -fsanitize=fuzzer,address,undefined,
#                  in build/libfuzzer/ (a second build of the libraries); needs
#                  Debian's clang and libclang-rt-14-dev (installed as root)
#   make fuzz-ci   runs each for FUZZ_SECONDS (60) over its corpus, the
#                  all at once (FUZZ_PARALLEL=0: one after the other)
# `make check` needs neither: build/tests/fuzz-replay-NAME feeds every file
# of fuzz/corpus/NAME (seeds and kept findings) to the same harness built
# with the ordinary compiler, so findings stay regression tests.

FUZZERS := ipcring_attach ipcring_records parse remote_proto plot_script flame
FUZZ_B := build/libfuzzer
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_PARALLEL ?= 1
FUZZ_PKGS := clang libclang-rt-14-dev
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_REPLAY := $(FUZZERS:%=$(B)/tests/fuzz-replay-%)

TEST_PROGS += $(FUZZ_REPLAY)
DEPS_FILES += $(FUZZERS:%=$(B)/fuzz/%.d) $(FUZZERS:%=$(B)/fuzz/replay-%.d)

# the harnesses reach into lib/ipcring/internal.h and src/cli_internal.h
$(B)/fuzz/%.o: CFLAGS += -Isrc -Ilib/ipcring

# static patterns: an open pattern would also "make" the missing .d files
$(FUZZERS:%=$(B)/fuzz/replay-%.o): $(B)/fuzz/replay-%.o: fuzz/replay.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DFUZZ_CORPUS='"$(CURDIR)/fuzz/corpus/$*"' -c -o $@ $<

$(filter %ipcring_attach %ipcring_records,$(FUZZ_REPLAY)): $(B)/tests/fuzz-replay-%: \
		$(B)/fuzz/%.o $(B)/fuzz/replay-%.o $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/fuzz-replay-parse $(B)/tests/fuzz-replay-remote_proto $(B)/tests/fuzz-replay-plot_script \
		$(B)/tests/fuzz-replay-flame: \
		$(B)/tests/fuzz-replay-%: \
		$(B)/fuzz/%.o $(B)/fuzz/replay-%.o $(IPCLAB_LIB) $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(IPCLAB_LIBS) $(LDLIBS)

# libFuzzer binaries: made by the sub-make of `make fuzz` (B=build-fuzz,
# CC=clang, sanitizer flags in CFLAGS); libFuzzer supplies main().
fuzz-bins: $(FUZZERS:%=$(B)/fuzz/bin/%)

$(B)/fuzz/bin/ipcring_attach $(B)/fuzz/bin/ipcring_records: $(B)/fuzz/bin/%: $(B)/fuzz/%.o $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

$(B)/fuzz/bin/parse $(B)/fuzz/bin/remote_proto $(B)/fuzz/bin/plot_script $(B)/fuzz/bin/flame: \
		$(B)/fuzz/bin/%: \
		$(B)/fuzz/%.o $(IPCLAB_LIB) $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(IPCLAB_LIBS) $(LDLIBS)

fuzz-deps:
	$(call deb_need,fuzz,$(FUZZ_PKGS))

# FUZZ_MS_NS: libipcring's millisecond in this build (RING_MS_NS, 10 us):
# inputs with timeouts run the same waits 100x shorter, not real milliseconds
FUZZ_MS_NS ?= 10000

fuzz: fuzz-deps
	@CFLAGS="-O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN) -DRING_MS_NS=$(FUZZ_MS_NS)ull" \
		LDFLAGS="$(FUZZ_SAN)" \
		$(MAKE) $(SUBMAKE_J) --no-print-directory B=$(FUZZ_B) SAN= WERROR= CC=$(FUZZ_CC) fuzz-bins
	@echo "fuzz: $(FUZZERS:%=$(FUZZ_B)/fuzz/bin/%)"

fuzz-ci: fuzz
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_PARALLEL=$(FUZZ_PARALLEL) fuzz/ci.sh $(FUZZ_B) $(FUZZERS)

.PHONY: fuzz fuzz-ci fuzz-deps fuzz-bins
