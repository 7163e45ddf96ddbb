# SPDX-License-Identifier: MIT
# ipclab: one non-recursive GNU Makefile. Objects go to $(B) (build/ by default;
# build-asan/ or build-tsan/ with SAN=asan|tsan). Parts live in mk/*.mk.

SAN	?=
ifeq ($(SAN),)
B	?= build
else
B	?= build-$(SAN)
endif

CC	?= cc
PREFIX	?= /usr/local
DESTDIR	?=
VERSION	:= 0.1.0
GIT_REV	:= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

WARN	:= -Wall -Wextra -Wshadow -Wno-unused-parameter -Wformat=2 -Wstrict-prototypes
CFLAGS	?= -O2 -g
CFLAGS	+= -std=gnu11 $(WARN) -D_GNU_SOURCE -pthread -Iinclude -MMD -MP \
	   -DIPCLAB_VERSION='"$(VERSION)"' -DIPCLAB_GIT_REV='"$(GIT_REV)"'
LDFLAGS	+= -pthread
LDLIBS	+= -lrt -lm

ifeq ($(SAN),asan)
CFLAGS	+= -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS	+= -fsanitize=address,undefined
endif
ifeq ($(SAN),tsan)
CFLAGS	+= -fsanitize=thread -fno-omit-frame-pointer -DIPCLAB_TSAN=1
LDFLAGS	+= -fsanitize=thread
endif
ifneq ($(WERROR),)
CFLAGS	+= -Werror
endif

PKGS	:= jansson cmocka
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)

# Known before any fragment is read, so that rules in every fragment can
# name them as prerequisites (those are expanded when read).
IPCLAB_LIB := $(B)/libipclab-internal.a
IPCLAB_BIN := $(B)/ipclab
IPCRING_A := $(B)/libipcring.a
IPCLAB_LIBS := $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson)
HAVE_LIBQB := $(shell pkg-config --exists libqb 2>/dev/null && echo 1)
ifeq ($(HAVE_LIBQB),1)
CFLAGS += -DHAVE_LIBQB=1
IPCLAB_LIBS += $(shell pkg-config --libs libqb)
endif
# The library transports (src/transport/zmq.c, nng.c, io_uring.c, dbus.c):
# each library is optional; without it the transport is still listed and
# skips with its install line.
HAVE_ZMQ := $(shell pkg-config --exists libzmq 2>/dev/null && echo 1)
ifeq ($(HAVE_ZMQ),1)
CFLAGS += -DHAVE_ZMQ=1
IPCLAB_LIBS += $(shell pkg-config --libs libzmq)
endif
# Debian's libnng-dev ships no .pc file: its header is the sign.
HAVE_NNG := $(shell { pkg-config --exists nng 2>/dev/null || test -f /usr/include/nng/nng.h; } && echo 1)
ifeq ($(HAVE_NNG),1)
CFLAGS += -DHAVE_NNG=1
IPCLAB_LIBS += $(shell pkg-config --libs nng 2>/dev/null || echo -lnng)
endif
HAVE_URING := $(shell pkg-config --exists liburing 2>/dev/null && echo 1)
ifeq ($(HAVE_URING),1)
CFLAGS += -DHAVE_URING=1 -DIOU_PKG_VERSION='"$(shell pkg-config --modversion liburing)"'
IPCLAB_LIBS += $(shell pkg-config --libs liburing)
endif
HAVE_SDBUS := $(shell pkg-config --exists libsystemd 2>/dev/null && echo 1)
ifeq ($(HAVE_SDBUS),1)
CFLAGS += -DHAVE_SDBUS=1
IPCLAB_LIBS += $(shell pkg-config --libs libsystemd)
endif
# The results store (src/db/): SQLite and PostgreSQL, each optional; without
# one, --db for it says what to install.
HAVE_SQLITE := $(shell pkg-config --exists sqlite3 2>/dev/null && echo 1)
ifeq ($(HAVE_SQLITE),1)
CFLAGS += -DHAVE_SQLITE=1
IPCLAB_LIBS += $(shell pkg-config --libs sqlite3)
endif
HAVE_PQ := $(shell pkg-config --exists libpq 2>/dev/null && echo 1)
ifeq ($(HAVE_PQ),1)
CFLAGS += -DHAVE_PQ=1 $(shell pkg-config --cflags libpq)
IPCLAB_LIBS += $(shell pkg-config --libs libpq)
endif

# The builds that check, run and fuzz start use every CPU unless make was
# given a -j of its own.
BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
SUBMAKE_J := $(if $(filter -j%,$(MAKEFLAGS)),,-j$(BUILD_JOBS))

# Filled by the mk/*.mk fragments.
ALL_TARGETS :=
TEST_PROGS :=
DEPS_FILES :=

.PHONY: all deps run check clean install bench stress
all: deps-ok

include $(sort $(wildcard mk/*.mk))

deps-ok: $(ALL_TARGETS)
.PHONY: deps-ok

# After the fragments, so that every TEST_PROGS entry is known.
tests: $(TEST_PROGS)
.PHONY: tests

-include $(DEPS_FILES)

clean:
	rm -rf build build-asan build-tsan
