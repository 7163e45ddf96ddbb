# SPDX-License-Identifier: MIT
# Helpers of the library transports' tests (issue 16): the LD_PRELOAD shim
# tests/cli/cma_refused.sh uses to make cross-memory attach refuse. Never
# sanitized (it is preloaded into sanitized binaries too), no dependencies.

CMA_EPERM := $(B)/tests/cli/cma_eperm.so
ALL_TARGETS += $(CMA_EPERM)

$(CMA_EPERM): tests/cli/cma_eperm.c
	@mkdir -p $(@D)
	$(CC) -shared -fPIC -O2 -std=gnu11 $(WARN) -Wno-unused-parameter -o $@ $<
