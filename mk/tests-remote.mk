# SPDX-License-Identifier: MIT
# Unit tests of src/remote: ipclab serve's request decoding (serve_req.c).

$(B)/tests/test_serve_req: $(B)/tests/unit/test_serve_req.o $(IPCLAB_LIB) $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(B)/tests/unit/test_serve_req.o $(IPCLAB_LIB) $(IPCRING_A) \
		$(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_serve_req
DEPS_FILES += $(B)/tests/unit/test_serve_req.d

# A side's record between hosts, its histogram above all (src/remote/proto.c).
$(B)/tests/test_remote_side: $(B)/tests/unit/test_remote_side.o $(IPCLAB_LIB) $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(B)/tests/unit/test_remote_side.o $(IPCLAB_LIB) $(IPCRING_A) \
		$(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_remote_side
DEPS_FILES += $(B)/tests/unit/test_remote_side.d
