# SPDX-License-Identifier: MIT
# ipclab report (src/report/html*.c): the page's style sheet and script are
# files of their own, linked into the binary by html_assets.c (.incbin), so
# the object depends on them. A script holding "</script" would end its
# element early: the build refuses it.

HTML_ASSETS := src/report/html/report.css src/report/html/report.js

$(B)/src/report/html_assets.o: $(HTML_ASSETS)
$(B)/src/report/html_assets.o: CFLAGS += -DHTML_CSS='"src/report/html/report.css"' \
	-DHTML_JS='"src/report/html/report.js"'

html-assets-check: $(HTML_ASSETS)
	@! grep -qi '</script\|</style' $(HTML_ASSETS) || \
		{ echo "report.js or report.css holds </script or </style: it would end its element" >&2; exit 1; }
.PHONY: html-assets-check
$(B)/src/report/html_assets.o: | html-assets-check

# the page's unit test: escaping, the data block, figures from the files
HTML_TEST := $(B)/tests/test_html
HTML_TEST_OBJS := $(B)/tests/unit/test_html.o

TEST_PROGS += $(HTML_TEST)
DEPS_FILES += $(HTML_TEST_OBJS:.o=.d)

$(HTML_TEST_OBJS): CFLAGS += -Isrc/report -DSRCDIR='"$(CURDIR)"'

$(HTML_TEST): $(HTML_TEST_OBJS) $(IPCLAB_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(HTML_TEST_OBJS) $(IPCLAB_LIB) \
		$(shell pkg-config --libs cmocka jansson 2>/dev/null || echo -lcmocka -ljansson) \
		$(IPCLAB_LIBS) $(LDLIBS)
