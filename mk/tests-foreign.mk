# SPDX-License-Identifier: MIT
# LD_PRELOAD helper for tests/cli/foreign_peer.sh (a foreign peer on the
# tcp/udp ports while a cell is set up): never sanitized, since it is
# preloaded into sanitized binaries too; no dependencies.

FOREIGN_HOOK := $(B)/tests/cli/foreign_hook.so

ALL_TARGETS += $(FOREIGN_HOOK)

$(FOREIGN_HOOK): tests/cli/foreign_hook.c
	@mkdir -p $(@D)
	$(CC) -shared -fPIC -O2 -std=gnu11 $(WARN) -o $@ $<
