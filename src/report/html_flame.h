/* SPDX-License-Identifier: MIT */
/* Flame graphs of the HTML report (html_flame.c): what a folded stacks file
 * may hold, and the drawing of one from its text (for html_flame and for
 * fuzz/flame.c). A folded file is hostile input: what it can make ipclab
 * read, keep and write is bounded by these limits (docs/report.md). */
#ifndef IPCLAB_REPORT_HTML_FLAME_H
#define IPCLAB_REPORT_HTML_FLAME_H

#include <stddef.h>

#include "html.h"

#define FL_MAX_BYTES (64u << 20)	/* a larger file is not read */
#define FL_MAX_LINE (256u << 10)	/* a longer line is skipped */
#define FL_MAX_DEPTH 128		/* frames of a stack past this are cut off */
#define FL_MAX_NODES (1u << 20)		/* distinct frames (root included); a stack past it is cut */
#define FL_MAX_COUNT (1ull << 40)	/* a line's count; a larger one is malformed */
#define FL_MAX_TOTAL (1ull << 53)	/* a file's samples (exact in a double); a line past is skipped */
#define FL_MAX_DRAWN 10000		/* frames drawn; the rest left out */
#define FL_TITLE_NAME 512		/* bytes of a frame's name in its tooltip */
#define FL_W 1200			/* the graph's width in SVG units */
#define FL_ROW 16			/* a frame's height */
#define FL_MIN_W 1.2			/* narrower frames (0.1 %) are left out (the parent shows them) */

/* The flame graph of text (len bytes of folded stacks, which this changes)
 * as one <figure>, with a note under it for what the limits cut or
 * skipped; name is the file's name for the caption. A text with no sample
 * gets a note instead. 0, or -ENOMEM (a note says so). */
int html_flame_text(struct html *h, const char *name, char *text, size_t len);

#endif
