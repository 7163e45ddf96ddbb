# SPDX-License-Identifier: MIT
# plot, compare and env: the compare/result-file unit test (it reads the
# stored fixtures in tests/data/, whose path it is given at compile time) and
# the bash completion. The man page is installed by mk/ipclab.mk.

COMPARE_TEST := $(B)/tests/test_compare
COMPARE_TEST_OBJS := $(B)/tests/unit/test_compare.o
COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions

TEST_PROGS += $(COMPARE_TEST)
DEPS_FILES += $(COMPARE_TEST_OBJS:.o=.d)

$(COMPARE_TEST_OBJS): CFLAGS += -Isrc/report -DSRCDIR='"$(CURDIR)"'

$(COMPARE_TEST): $(COMPARE_TEST_OBJS) $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(COMPARE_TEST_OBJS) $(IPCLAB_LIB) \
		$(shell pkg-config --libs cmocka jansson 2>/dev/null || echo -lcmocka -ljansson) \
		$(IPCLAB_LIBS) $(LDLIBS)

.PHONY: install-completion
install: install-completion
install-completion:
	install -D -m 0644 docs/ipclab.bash-completion $(DESTDIR)$(COMPLETION_DIR)/ipclab

# The option lists of the completion, made from the commands' option tables
# (src/cmd/cli_opt.h): tests/cli/option_tables.sh fails until this is run
# after an option is added or changed.
COMPLETION_MARK := made by ipclab --dump-completion
.PHONY: completion
completion: $(IPCLAB_BIN)
	$(IPCLAB_BIN) --dump-completion >$(B)/completion.gen
	awk -v gen=$(B)/completion.gen '/^# BEGIN $(COMPLETION_MARK)/ { while ((getline l < gen) > 0) \
		print l; skip = 1; next } /^# END $(COMPLETION_MARK)/ { skip = 0; next } !skip' \
		docs/ipclab.bash-completion >$(B)/completion.new
	mv $(B)/completion.new docs/ipclab.bash-completion
