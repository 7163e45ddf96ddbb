/* SPDX-License-Identifier: MIT */
/* A command's options as data: one table per command (a row per option:
 * long and short name, what its value looks like, help, where the value
 * goes, its type, range and default, what completes it) from which the
 * getopt tables, --help, the bash completion (ipclab --dump-completion)
 * and the list the man page is checked against (ipclab --dump-options)
 * are all made. Adding an option is one row and the field it fills. */
#ifndef IPCLAB_CMD_CLI_OPT_H
#define IPCLAB_CMD_CLI_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ipclab/opt.h"

enum cli_kind {
	CLI_TEXT,	/* the value's text, as typed, into a char * at offset */
	CLI_FLAG,	/* no value: true into a bool at offset */
	CLI_NUMBER,	/* type OPT_UINT (200k) or OPT_DURATION (5s), within [min, max],
			 * into a uint64_t at offset; CLI_MARK_SET: true into the bool at
			 * set_offset too */
	CLI_CALL,	/* its own parser: call */
};

#define CLI_MARK_SET 1u		/* a number: set_offset's bool says it was given */
#define CLI_HIDE_DEFAULT 2u	/* def is applied but not shown in --help */
#define CLI_LIST 4u		/* CLI_TEXT: a comma list (run: split into a copy, at most
				 * PLAN_MAX_LIST words) */

struct cli_ctx {
	int argc;
	char **argv;		/* optind is getopt's: a parser may take the next word */
	const char *cmd;	/* for messages: NULL for run */
};

struct cli_opt {
	const char *name;	/* long name, without "--" */
	char short_name;	/* or 0 */
	int has_arg;		/* getopt's no_argument, required_argument, optional_argument */
	const char *metavar;	/* what the value looks like ("LIST", "[=URL]": glued) */
	const char *help;	/* lines split by \n; {patterns} and {formats} are
				 * replaced by the names of the pattern and format tables */
	enum cli_kind kind;
	enum opt_type type;	/* CLI_NUMBER */
	size_t offset;		/* into the command's arguments */
	size_t set_offset;	/* CLI_MARK_SET */
	uint64_t min, max;	/* CLI_NUMBER: inclusive (max 0 = none) */
	const char *def;	/* the default, as text, shown as "; default X" */
	const char *bad;	/* CLI_NUMBER: the error after "-n VALUE: " */
	/* CLI_CALL: 0, 2 (bad input, said) or -1 (done: exit 0, e.g. --help) */
	int (*call)(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx);
	int id;			/* CLI_CALL: told apart by the parser it shares */
	/* completion of the value: NULL none; "@transports" (with "all"),
	 * "@transport-names" (without), "@patterns",
	 * "@keys" (-O), "@file", "@dir", "@formats"; "list:W W" a comma list
	 * of the words; else the words. An optional value: the words also as
	 * --name=W */
	const char *values;
	unsigned flags;
};

/* A command and its table (a NULL name ends each table), for the dumps. */
struct cli_command {
	const char *name;		/* "run", "suite seeds" */
	const char *fn;			/* its completion function: "_ipclab_run" */
	const char *man;		/* its section of docs/ipclab.1: "RUN OPTIONS" */
	const struct cli_opt *opts;
	const size_t *size;		/* of the arguments the table fills */
	unsigned formats;		/* FMT_* bit of the command: what @formats means */
	bool json_operands;		/* the completion offers result files besides options */
};
extern const struct cli_command cli_commands[];
/* The commands' tables (run's is in run.h), and the size of what each fills. */
extern const struct cli_opt compare_options[], env_options[], list_options[], suite_options[],
	plot_options[], report_options[], history_options[], db_options[], clean_options[],
	serve_options[], fidelity_options[];
extern const size_t compare_args_size, env_args_size, list_args_size, suite_args_size,
	plot_args_size, report_args_size, history_args_size, db_args_size, clean_args_size,
	serve_args_size, fidelity_args_size;

/* Parsers rows share. -f: the format (id: the command's FMT_* bits) by
 * its name into the const char * at offset; -o and the like: a file to
 * write, checked now (output_check), into the const char * at offset. */
int cli_opt_format(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx);
int cli_opt_output(const struct cli_opt *o, char *arg, void *args, struct cli_ctx *ctx);

/* The defaults (def) of the table's rows into args: a CLI_CALL row's
 * through its parser. 0, or -EINVAL when one does not parse (a bug:
 * cli_check finds it). */
int cli_defaults(const struct cli_opt *t, void *args);
/* getopt_long over argv with t: each option into args. Unknown options,
 * missing values and operands are errors ("see ipclab [CMD ]--help");
 * operands are left at optind when operands is true. 0, 2 (bad input,
 * said) or -1 (--help or --version done). */
int cli_parse(const struct cli_opt *t, int argc, char **argv, void *args, const char *cmd,
	      bool operands);
/* cli_parse with a command's own ways: options end at the first operand
 * (posix, getopt's "+"), and its own words for an unknown option or one
 * without its value (bad: said, returns 2; NULL: cli_parse's words). */
struct cli_how {
	const char *cmd;	/* for messages: NULL for run */
	bool operands;		/* operands are left at optind */
	bool posix;
	int (*bad)(const char *word);	/* the option as typed */
};
int cli_parse_how(const struct cli_opt *t, int argc, char **argv, void *args,
		  const struct cli_how *how);
/* The option lines of --help. */
void cli_help(FILE *f, const struct cli_opt *t, unsigned formats);
/* One row's help as one line ({patterns}, {formats} replaced) into buf. */
void cli_help_text(const struct cli_opt *o, unsigned formats, char *buf, size_t len);
/* "-n 7: expected ..." for a row: its name as the user sees it. */
const char *cli_shown(const struct cli_opt *o);

/* Every table sound: names and short names unique, each row complete,
 * each default parses. 0, or -EINVAL with the first fault in err. */
int cli_check(char *err, size_t errlen);
/* ipclab --dump-options: a line per option of every command, tab
 * separated: command, its man page section, short name (or -), long name;
 * ipclab --dump-completion: the generated block of
 * docs/ipclab.bash-completion. Hidden: for the tests and make docs. */
void cli_dump_options(FILE *f);
void cli_dump_completion(FILE *f);

/* One format vocabulary (formats.c): every name -f takes, in any command,
 * and which commands take it. "table" is the human one; "text" its alias. */
enum {
	FMT_RUN = 1u << 0, FMT_SUITE = 1u << 1, FMT_COMPARE = 1u << 2, FMT_ENV = 1u << 3,
	FMT_HISTORY = 1u << 4, FMT_DB = 1u << 5, FMT_LIST = 1u << 6,
};
struct format_name {
	const char *name, *alias;
	unsigned cmds;		/* FMT_* */
	const char *summary;
};
extern const struct format_name format_names[];	/* NULL-name terminated */
/* arg as the command's format: its name (an alias gives the name), or
 * NULL with the usage error said ("-f X: expected table, json or csv"). */
const char *format_pick(unsigned cmds, const char *arg, const char *cmd);
/* "table, json or csv"; sep between all but the last two (", "). */
void format_list(unsigned cmds, const char *sep, const char *last, char *buf, size_t len);

#endif
