/* SPDX-License-Identifier: MIT */
/* Strings that came from a file, a store, a peer or another process (a
 * task's comm), on their way to a terminal: every byte that could move the
 * cursor, retitle the window or hide what came before -- C0 controls (ESC,
 * CR, BS, newline, ...), DEL, C1 controls, invalid UTF-8, and the Unicode
 * controls that reorder text (bidirectional overrides) -- is shown escaped,
 * \x1b or \u202e, never written raw. Valid UTF-8 text stays as it is. And
 * the one place that says where a UTF-8 string may be cut. */
#ifndef IPCLAB_SAFE_PRINT_H
#define IPCLAB_SAFE_PRINT_H

#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes; overlong
 * forms, surrogates and code points past U+10FFFF are invalid), 0 if the
 * bytes there are none. */
size_t utf8_seq_len(const char *s, size_t n);

/* The longest prefix of s of at most max bytes that ends at a character
 * boundary (never inside a UTF-8 sequence): the length to cut s at. */
size_t utf8_cut(const char *s, size_t max);

/* s shown safely into buf (always terminated; cut whole, never inside an
 * escape or a character); returns buf, for printf's %s. NULL reads as "". */
const char *safe_str(char *buf, size_t len, const char *s);

/* s (n bytes at most; up to a NUL) written to f safely, whole. */
void safe_fputsn(FILE *f, const char *s, size_t n);
void safe_fputs(FILE *f, const char *s);

#endif
