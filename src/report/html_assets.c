// SPDX-License-Identifier: MIT
/* The HTML report's style sheet and script, kept as files of their own
 * (src/report/html/report.css, report.js) and linked into ipclab as
 * read-only data, as the BPF object is (src/trace/embed.c): the page
 * carries them inline and the binary needs no file beside it. The paths
 * come from mk/report-html.mk. */
#include <stdio.h>

#include "html.h"

#ifndef HTML_CSS
#define HTML_CSS "src/report/html/report.css"
#endif
#ifndef HTML_JS
#define HTML_JS "src/report/html/report.js"
#endif

__asm__(".section .rodata\n"
	".global html_css\n"
	"html_css:\n"
	".incbin \"" HTML_CSS "\"\n"
	".global html_css_end\n"
	"html_css_end:\n"
	".byte 0\n"
	".global html_js\n"
	"html_js:\n"
	".incbin \"" HTML_JS "\"\n"
	".global html_js_end\n"
	"html_js_end:\n"
	".byte 0\n"
	".previous\n");

extern const char html_css[], html_css_end[], html_js[], html_js_end[];

void html_write_css(FILE *f)
{
	fwrite(html_css, 1, (size_t)(html_css_end - html_css), f);
}

/* The script must not hold "</script" (it would end the element early). */
void html_write_js(FILE *f)
{
	fwrite(html_js, 1, (size_t)(html_js_end - html_js), f);
}
