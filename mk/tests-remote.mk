# SPDX-License-Identifier: MIT
# Unit test of ipclab serve's request decoding (src/remote/serve_req.c).

$(B)/tests/test_serve_req: $(B)/tests/unit/test_serve_req.o $(IPCLAB_LIB) $(IPCRING_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(B)/tests/unit/test_serve_req.o $(IPCLAB_LIB) $(IPCRING_A) \
		$(CMOCKA_LIBS) $(IPCLAB_LIBS) $(LDLIBS)

TEST_PROGS += $(B)/tests/test_serve_req
DEPS_FILES += $(B)/tests/unit/test_serve_req.d
