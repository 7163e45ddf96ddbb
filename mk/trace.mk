# SPDX-License-Identifier: MIT
# --trace (src/trace/): the BPF object, built with clang and linked into
# ipclab, and the tracer's test program. Without libbpf-dev or clang the
# rest still builds and --trace is refused with the package to install.

TRACE_CLANG ?= clang
# where <asm/types.h> lives: Debian's multiarch directory (clang's
# -dumpmachine names another triple, so it cannot be asked)
TRACE_MULTIARCH := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine 2>/dev/null)
HAVE_LIBBPF := $(shell pkg-config --exists libbpf 2>/dev/null && command -v $(TRACE_CLANG) >/dev/null && echo 1)

ifeq ($(HAVE_LIBBPF),1)
TRACE_BPF_OBJ := $(B)/src/trace/sched.bpf.o
TRACE_BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_x86 -Wall \
	-I/usr/include/$(TRACE_MULTIARCH)
IPCLAB_LIBS += $(shell pkg-config --libs libbpf)

$(B)/src/trace/%.o: CFLAGS += -DHAVE_LIBBPF=1 -I$(B)/src/trace
$(B)/src/trace/embed.o: CFLAGS += -DTRACE_BPF_OBJ='"$(TRACE_BPF_OBJ)"'
$(B)/src/trace/embed.o: $(TRACE_BPF_OBJ)
$(B)/src/trace/trace.o: $(B)/src/trace/sysnames.h

$(TRACE_BPF_OBJ): src/trace/bpf/sched.bpf.c src/trace/bpf/preempt.bpf.h src/trace/bpf/cpath.bpf.h \
		  src/trace/bpf/unseen.bpf.h src/trace/trace_shared.h
	@mkdir -p $(@D)
	$(TRACE_CLANG) $(TRACE_BPF_CFLAGS) -c -o $@ $<

# syscall names by number, from the C library's own __NR_ macros
$(B)/src/trace/sysnames.h:
	@mkdir -p $(@D)
	printf '#include <sys/syscall.h>\n' | $(CC) -dM -E - | \
		awk '$$1 == "#define" && $$2 ~ /^__NR_[a-z0-9_]+$$/ && $$3 ~ /^[0-9]+$$/ \
			{ printf "\t[%s] = \"%s\",\n", $$3, substr($$2, 6) }' > $@
endif

# --profile (src/trace/profile*.c) names user addresses with elfutils'
# libdwfl; without libdw-dev it still builds and --profile is refused with
# the package to install.
HAVE_LIBDW := $(shell pkg-config --exists libdw 2>/dev/null && echo 1)
ifeq ($(HAVE_LIBDW),1)
$(B)/src/trace/profile.o $(B)/src/trace/profile_%.o: CFLAGS += -DHAVE_LIBDW=1 $(shell pkg-config --cflags libdw)
IPCLAB_LIBS += $(shell pkg-config --libs libdw)
endif

$(B)/tests/test_trace: $(B)/tests/unit/test_trace.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_trace
DEPS_FILES += $(B)/tests/unit/test_trace.d

$(B)/tests/test_trace_unseen: $(B)/tests/unit/test_trace_unseen.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_trace_unseen
DEPS_FILES += $(B)/tests/unit/test_trace_unseen.d

$(B)/tests/test_explain: $(B)/tests/unit/test_explain.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_explain
DEPS_FILES += $(B)/tests/unit/test_explain.d

$(B)/tests/test_cause_labels: $(B)/tests/unit/test_cause_labels.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_cause_labels
DEPS_FILES += $(B)/tests/unit/test_cause_labels.d

$(B)/tests/test_cause_ci: $(B)/tests/unit/test_cause_ci.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_cause_ci
DEPS_FILES += $(B)/tests/unit/test_cause_ci.d

$(B)/tests/test_cause_slices: $(B)/tests/unit/test_cause_slices.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_cause_slices
DEPS_FILES += $(B)/tests/unit/test_cause_slices.d
