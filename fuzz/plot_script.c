// SPDX-License-Identifier: MIT
/*
 * plot_script.c - libFuzzer harness: ipclab plot's gnuplot scripts from a
 * result file someone else wrote (src/report/plot*.c, through
 * plot_scripts: no file is written, gnuplot does not run). An input that
 * starts with '{' is a result file itself; any other is a template run:
 * bytes 1-4 pick which of the template's texts (every string of a result
 * file of each kind of figure: names, labels, options and their names,
 * env, cmdline, size, matrix.metric, the file's path) are replaced, the
 * rest are the hostile texts that replace them ('\0'-separated), and the
 * heatmaps are asked for over the hostile option name directly (as if
 * --pivot had let it through). Besides never crashing: every figure name
 * is letters, digits, '_' and '-'; every script is made of ipclab's own
 * commands only (set, unset, plot, do, if, array and W, H, cls
 * assignments, set with the subcommands ipclab uses), with no backquote,
 * no macro, no shell escape, no system(), load, call, print or other
 * command word anywhere outside a string, no string or comment that goes
 * on past its line, and only NAME.dat / NAME.<fmt> (a plain figure name)
 * as the file a plot reads or set output writes. Aborts otherwise.
 * PLOT_SCRIPT_DEBUG=1 lists the figures made and the refusals;
 * PLOT_SCRIPT_CHECK=1 takes each input as a script and only checks it
 * (scripts another ipclab wrote: build/tests/fuzz-replay-plot_script F.gp).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/plot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the checker ------------------------------------------------------------------ */

enum tk { T_WORD, T_NUM, T_SQ, T_DQ, T_PUNCT, T_END };

struct tok {
	enum tk k;
	const char *s;			/* text (strings: their content) */
	size_t n;
};

static void bad(const char *why, const char *at, size_t len)
{
	fprintf(stderr, "plot_script: %s at: %.*s\n", why, (int)(len > 80 ? 80 : len), at);
	abort();
}

static bool tok_is(const struct tok *t, enum tk k, const char *s)
{
	return t->k == k && strlen(s) == t->n && !memcmp(t->s, s, t->n);
}

static bool in_list(const struct tok *t, const char *const *list)
{
	for (; *list; list++)
		if (tok_is(t, T_WORD, *list))
			return true;
	return false;
}

/* A quoted string, to its closing quote on the same line; returns its end. */
static size_t quoted(const char *gp, size_t len, size_t i, struct tok *t)
{
	char q = gp[i];
	size_t j = i + 1;

	for (;; j++) {
		if (j >= len || gp[j] == '\n')
			bad("a string goes on past its line", gp + i, len - i);
		if (q == '"' && gp[j] == '`')
			bad("a backquote in a double-quoted string (gnuplot runs it)", gp + i, len - i);
		if (q == '"' && gp[j] == '\\') {
			j++;
			if (j >= len || gp[j] == '\n')
				bad("a string goes on past its line", gp + i, len - i);
			continue;
		}
		if (gp[j] == q && q == '\'' && j + 1 < len && gp[j + 1] == '\'') {
			j++;
			continue;
		}
		if (gp[j] == q)
			break;
	}
	*t = (struct tok){ q == '"' ? T_DQ : T_SQ, gp + i + 1, j - i - 1 };
	return j + 1;
}

/* A comment, to the end of its line; returns its end. */
static size_t comment(const char *gp, size_t len, size_t i)
{
	size_t j = i;

	for (; j < len && gp[j] != '\n'; j++)
		if ((unsigned char)gp[j] < 0x20 && gp[j] != '\t')
			bad("a control character in a comment", gp + i, len - i);
	if (gp[j - 1] == '\\')
		bad("a comment that swallows the next line", gp + i, len - i);
	return j;
}

/* One token at gp[i] (not blank); returns where the next starts. */
static size_t lex_one(const char *gp, size_t len, size_t i, struct tok *t)
{
	char c = gp[i];
	size_t j = i + 1;

	if (c == '\'' || c == '"')
		return quoted(gp, len, i, t);
	if (c == '`' || c == '@' || (c == '!' && (j >= len || gp[j] != '=')) ||
	    (c == '$' && (j >= len || !isdigit((unsigned char)gp[j]))) || (unsigned char)c < 0x20 ||
	    (unsigned char)c >= 0x7f)
		bad("a backquote, macro, shell escape, datablock or odd byte in code", gp + i, len - i);
	if (isalpha((unsigned char)c) || c == '_') {
		while (j < len && (isalnum((unsigned char)gp[j]) || gp[j] == '_'))
			j++;
		*t = (struct tok){ T_WORD, gp + i, j - i };
	} else if (isdigit((unsigned char)c)) {
		while (j < len && (isdigit((unsigned char)gp[j]) || gp[j] == '.'))
			j++;
		*t = (struct tok){ T_NUM, gp + i, j - i };
	} else {
		*t = (struct tok){ T_PUNCT, gp + i, 1 };
	}
	return j;
}

/* The script as tokens; a newline or ';' ends a statement (T_END). */
static size_t lex(const char *gp, size_t len, struct tok *t)
{
	size_t n = 0;

	for (size_t i = 0; i < len;) {
		char c = gp[i];

		if (c == '\n' || c == ';') {
			t[n++] = (struct tok){ T_END, gp + i, 1 };
			i++;
		} else if (c == ' ' || c == '\t') {
			i++;
		} else if (c == '\\' && i + 1 < len && gp[i + 1] == '\n') {
			i += 2;		/* a continued line */
		} else if (c == '#') {
			i = comment(gp, len, i);
		} else {
			i = lex_one(gp, len, i, &t[n++]);
		}
	}
	t[n++] = (struct tok){ T_END, gp + len, 0 };
	return n;
}

static bool plain_name(const char *s, size_t n)
{
	if (!n || n > FIG_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

/* set output "NAME." . fmt, or set output alone. */
static void check_output(const struct tok *t)
{
	if (t[0].k == T_END)
		return;
	if (t[0].k != T_DQ || t[0].n < 2 || t[0].s[t[0].n - 1] != '.' ||
	    !plain_name(t[0].s, t[0].n - 1) || !tok_is(&t[1], T_PUNCT, ".") ||
	    !tok_is(&t[2], T_WORD, "fmt") || t[3].k != T_END)
		bad("set output to something else than NAME.fmt", t[0].s, 80);
}

/* Each of a plot's elements, [for [...]] then "NAME.dat" or "". */
static void check_plot(const struct tok *t)
{
	for (bool start = true; t->k != T_END;) {
		int depth = 0;

		if (start && tok_is(t, T_WORD, "for")) {
			for (t++; t->k != T_END; t++) {
				depth += tok_is(t, T_PUNCT, "[") - tok_is(t, T_PUNCT, "]");
				if (!depth)
					break;
			}
			t += t->k != T_END;
		}
		if (start && !(t->k == T_DQ && (t->n == 0 || (t->n > 4 && !memcmp(t->s + t->n - 4, ".dat", 4) &&
							     plain_name(t->s, t->n - 4)))))
			bad("a plot of something else than NAME.dat", t->s, 80);
		start = false;
		for (; t->k != T_END && !(depth == 0 && tok_is(t, T_PUNCT, ",")); t++)
			depth += tok_is(t, T_PUNCT, "(") + tok_is(t, T_PUNCT, "[") -
				 tok_is(t, T_PUNCT, ")") - tok_is(t, T_PUNCT, "]");
		if (t->k != T_END) {
			t++;
			start = true;
		}
	}
}

static const char *const commands[] = { "set", "unset", "plot", "do", "if", "array", NULL };
static const char *const variables[] = { "W", "H", "cls", NULL };
static const char *const set_what[] = {
	"terminal", "output", "datafile", "grid", "key", "title", "xlabel", "ylabel", "cblabel",
	"logscale", "xrange", "yrange", "cbrange", "xtics", "style", "palette", "arrow", "label", "boxwidth", "object", NULL,
};
static const char *const banned[] = {
	"system", "load", "call", "eval", "evaluate", "shell", "cd", "save", "print", "printerr",
	"pipe", "reread", "exit", "quit", "history", "import", "pause", "bind", "fit", "update",
	"table", "loadpath", "fontpath", "test", "stats", "splot", "replot", "help", "show", NULL,
};

/* One statement, t[0] to its T_END. */
static void check_statement(const struct tok *t)
{
	for (const struct tok *u = t; u->k != T_END; u++)
		if (in_list(u, banned))
			bad("a command word outside a string", u->s, 80);
	while (tok_is(t, T_PUNCT, "}") || tok_is(t, T_PUNCT, "{") || tok_is(t, T_WORD, "else"))
		t++;
	if (t->k == T_END)
		return;
	if (in_list(t, variables) && (tok_is(&t[1], T_PUNCT, "=") || tok_is(&t[1], T_PUNCT, "[")))
		return;
	if (!in_list(t, commands))
		bad("a statement ipclab does not write", t->s, 80);
	if ((tok_is(t, T_WORD, "set") || tok_is(t, T_WORD, "unset")) && !in_list(&t[1], set_what))
		bad("a set of something ipclab does not set", t->s, 80);
	if (tok_is(t, T_WORD, "set") && tok_is(&t[1], T_WORD, "output"))
		check_output(t + 2);
	if (tok_is(t, T_WORD, "plot"))
		check_plot(t + 1);
}

static int check_figure(void *arg, const char *name, const char *dat, size_t datlen,
			const char *gp, size_t gplen)
{
	struct tok *t = malloc((gplen + 2) * sizeof(*t));
	size_t n;

	(void)arg;
	if (getenv("PLOT_SCRIPT_DEBUG"))
		fprintf(stderr, "figure %s: %zu bytes of script\n", name, gplen);
	if (!plain_name(name, strlen(name)))
		bad("a figure name that is not plain", name, strlen(name));
	if (!t || memchr(gp, '\0', gplen) || memchr(dat, '\0', datlen))
		abort();
	n = lex(gp, gplen, t);
	for (size_t i = 0; i < n; i++) {
		check_statement(&t[i]);
		while (t[i].k != T_END)
			i++;
	}
	free(t);
	return 0;
}

/* ---- the template --------------------------------------------------------------------- */

/* "@N:default": text N (bit N of the mask: hostile, else the default; a
 * default "#123" is the number). Keys "@N:key" are renamed alike. */
static const char template[] =
	"{\"schema_version\":1,\"cmdline\":\"@11:ipclab run -p pingpong --pivot size,@26:recv,cpu_pct_total\","
	"\"env\":{\"hostname\":\"@12:vm\",\"kernel\":\"@13:6.1\",\"@27:cpu_model\":\"x\"},"
	"\"matrix\":{\"metric\":\"@15:lat_p50_ns\",\"cpus\":[0,1],\"pairs\":{\"@16:0:1\":\"@17:smt\",\"0:0\":\"same_cpu\"}},"
	"\"results\":["
#define CELL(tp, size, pin, rate)                                                                  \
	"{\"transport\":\"" tp "\",\"pattern\":\"@2:pingpong\",\"size_bytes\":" size ","             \
	"\"endpoints\":\"@3:process\",\"pin\":\"" pin "\",\"@23:sched\":\"@6:other\","             \
	"\"status\":\"@19:ok\",\"options\":{\"transport\":{\"@7:pipe-size\":\"@8:0\"},"            \
	"\"pattern\":{\"@26:recv\":\"@10:auto\"}},\"metrics\":{\"lat_kind\":\"@18:rtt\","          \
	"\"lat_min_ns\":900,\"lat_max_ns\":2000,\"lat_p50_ns\":1000,\"msgs_per_s\":" rate ","      \
	"\"bytes_per_s\":" rate "000,\"cpu_ns_per_msg\":" rate ",\"cpu_pct_total\":50},"           \
	"\"sides\":[{\"role\":\"@25:server\"}],"                                                   \
	"\"histogram\":{\"unit\":\"@22:ns\",\"sub_buckets\":128,\"buckets\":[[1000,5],[1500,3]]}}"
	CELL("@0:pipe", "64", "@4:0:0", "1000") ","
	CELL("@0:pipe", "64", "@5:0:1", "2000") ","
	CELL("@0:pipe", "64", "1:0", "3000") ","
	CELL("@0:pipe", "64", "1:1", "4000") ","
	CELL("@1:unix-stream", "\"@14:#1024\"", "@5:0:1", "5000") ","
#undef CELL
	"{\"transport\":\"@20:null\",\"pattern\":\"@21:cycle\",\"size_bytes\":64,\"status\":\"ok\","
	"\"period_ns\":1000000,\"@9:stages_opt\":\"@24:2\",\"options\":{},"
	"\"cycle_series\":{\"cycles_per_point\":10,\"max_ns\":[100000,null,900000],\"xruns\":[0,0,1]},"
	"\"metrics\":{\"deadline_ns\":800000,\"stages\":[{\"wait_share_pct\":10,\"busy_share_pct\":20},"
	"{\"wait_share_pct\":5,\"busy_share_pct\":30}]}}"
	"]}";

struct hostile {
	uint32_t mask;
	const char *text[32];
	unsigned n;
	char chosen[32][64];		/* what each slot became ("" if longer) */
};

static const char *const nasty[] = {
	"x\n!touch M\n", "x`touch M`", "x\"; system(\"touch M\") #\\", "x'; system('touch M') #/../..",
	"x\nsystem(\"touch M\")\n#", "../../x", "<touch M", "|touch M", "@x", "k\"\nload 'y'\n#",
};

/* The text for placeholder p ("@N:default"). */
static json_t *slot(struct hostile *h, const char *p, bool *is_hostile)
{
	char *end;
	unsigned long k = strtoul(p + 1, &end, 10) % 32;
	const char *def = *end == ':' ? end + 1 : "";

	*is_hostile = h->n && (h->mask >> k & 1);
	if ((size_t)snprintf(h->chosen[k], sizeof(h->chosen[k]), "%s",
			     *is_hostile ? h->text[k % h->n] : def) >= sizeof(h->chosen[k]))
		h->chosen[k][0] = '\0';
	if (*is_hostile)
		return json_string(h->text[k % h->n]);
	if (def[0] == '#')
		return json_integer(strtoll(def + 1, NULL, 10));
	return json_string(def);
}

static void fill(json_t *v, struct hostile *h)
{
	const char *key;
	json_t *x, *copy;
	size_t i;
	bool hostile;

	if (json_is_array(v)) {
		json_array_foreach(v, i, x) {
			if (json_is_string(x) && json_string_value(x)[0] == '@')
				json_array_set_new(v, i, slot(h, json_string_value(x), &hostile));
			else
				fill(x, h);
		}
	}
	if (!json_is_object(v))
		return;
	copy = json_copy(v);	/* keys change: walk a copy */
	json_object_foreach(copy, key, x) {
		json_t *val = json_incref(x);

		if (json_is_string(x) && json_string_value(x)[0] == '@') {
			json_decref(val);
			val = slot(h, json_string_value(x), &hostile);
		} else {
			fill(val, h);
		}
		json_object_del(v, key);
		if (key[0] == '@') {
			json_t *k = slot(h, key, &hostile);

			json_object_set_new(v, json_string_value(k), val);
			json_decref(k);
		} else {
			json_object_set_new(v, key, val);
		}
	}
	json_decref(copy);
}

/* ---- one input --------------------------------------------------------------------------- */

static void run(const char *name, const char *text, size_t len, struct plot_opts *o)
{
	char err[ERRLEN] = "";

	o->width = 1000;
	o->height = 600;
	o->emit = check_figure;
	if (plot_scripts(name, text, len, o, err, sizeof(err)) && !err[0])
		abort();	/* a refusal says why */
	if (getenv("PLOT_SCRIPT_DEBUG") && err[0])
		fprintf(stderr, "refused: %s\n", err);
}

/* The hostile texts: '\0'-separated after the mask, or the built-in ones. */
static void split_texts(struct hostile *h, char *buf, size_t len)
{
	for (size_t i = 0; i < len && h->n < ARRAY_SIZE(h->text); i += strlen(buf + i) + 1)
		h->text[h->n++] = buf + i;
	if (h->n)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(nasty); i++)
		h->text[h->n++] = nasty[i];
}

static void run_template(const uint8_t *data, size_t size)
{
	struct hostile h = { 0 };
	struct plot_opts o = { 0 };
	json_t *doc = json_loads(template, 0, NULL);
	char *buf = calloc(1, size + 1), *text;

	if (!doc || !buf)
		abort();
	for (size_t i = 1; i < 5 && i < size; i++)
		h.mask |= (uint32_t)data[i] << (8 * (i - 1));
	if (size > 5)
		memcpy(buf, data + 5, size - 5);
	split_texts(&h, buf, size > 5 ? size - 5 : 0);
	fill(doc, &h);
	/* heatmaps over a hostile option name, as if --pivot let it through */
	o.pivots[o.npivots++] = (struct plot_pivot){ "size_bytes", "pin", "cpu_pct_total" };
	if (h.chosen[7][0]) {
		snprintf(o.pivots[1].row, sizeof(o.pivots[1].row), "size_bytes");
		snprintf(o.pivots[1].col, sizeof(o.pivots[1].col), "%s", h.chosen[7]);
		snprintf(o.pivots[1].metric, sizeof(o.pivots[1].metric), "cpu_pct_total");
		o.npivots++;
	}
	text = json_dumps(doc, JSON_COMPACT);
	if (!text)
		abort();
	run(h.mask >> 31 && h.n ? h.text[0] : "results.json", text, strlen(text), &o);
	/* the same without asked-for heatmaps: the file's own cmdline --pivot */
	o.npivots = 0;
	run("results.json", text, strlen(text), &o);
	free(text);
	json_decref(doc);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct plot_opts o = { 0 };

	if (getenv("PLOT_SCRIPT_CHECK"))
		return check_figure(NULL, "script", "", 0, (const char *)data, size);
	if (size && data[0] == '{')
		run("results.json", (const char *)data, size, &o);
	else
		run_template(data, size);
	return 0;
}
