# SPDX-License-Identifier: MIT
# Unit test of the topology reader and the matrix (src/core/topology.c)
# against fake sysfs trees.

$(B)/tests/test_topology: $(B)/tests/unit/test_topology.o $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_topology
DEPS_FILES += $(B)/tests/unit/test_topology.d
