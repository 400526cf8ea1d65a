/* test_options.c: `cmon trace` / `cmon list` / `cmon profile` command-line parsing. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "agg/hist_arg.h"
#include "cli/options.h"

#define MAX_ARGS 16

/* Parse a NULL-terminated list of words; argv storage lives in the case. */
static int parse_words(enum cmd_kind kind, char **words, struct cmd_opts *o)
{
	int argc = 0;

	while (words[argc])
		argc++;
	memset(o, 0, sizeof(*o));
	return cmd_opts__parse(kind, argc, words, o);
}

static void test_trace_pid_and_funcs(void **state)
{
	char *argv[] = { "trace", "-p", "42", "--pid", "43", "--func", "foo", "-f", "libc.so.6:malloc",
			 "-F", "csv", "-o", "out.csv", NULL };
	struct cmd_opts o;

	assert_int_equal(parse_words(CMD_TRACE, argv, &o), 0);
	assert_int_equal(o.n_pids, 2);
	assert_int_equal(o.pids[0], 42);
	assert_int_equal(o.pids[1], 43);
	assert_int_equal(o.n_funcs, 2);
	assert_string_equal(o.funcs[0], "foo");
	assert_string_equal(o.funcs[1], "libc.so.6:malloc");
	assert_int_equal(o.format, OUT_CSV);
	assert_string_equal(o.output, "out.csv");
	assert_null(o.cmd);
	assert_int_equal(o.poll_ms, 10);
	cmd_opts__free(&o);
}

static void test_if_and_on_change(void **state)
{
	char *argv[] = { "trace", "-p", "1", "-f", "f", "--if", "a > 1 && s == \"x\"",
			 "--on-change", "b->len", NULL };
	struct cmd_opts o;

	(void)state;
	assert_int_equal(parse_words(CMD_TRACE, argv, &o), 0);
	assert_string_equal(o.if_expr, "a > 1 && s == \"x\"");
	assert_string_equal(o.on_change, "b->len");
	cmd_opts__free(&o);
}

static void test_trace_launch(void **state)
{
	char *argv[] = { "trace", "--func", "sqlite3_*", "--no-return", "--max-events", "100",
			 "--duration", "2.5", "--", "./app", "--flag", "x", NULL };
	struct cmd_opts o;

	assert_int_equal(parse_words(CMD_TRACE, argv, &o), 0);
	assert_int_equal(o.cmd_argc, 3);
	assert_string_equal(o.cmd[0], "./app");
	assert_string_equal(o.cmd[1], "--flag"); /* the program's options stay its own */
	assert_true(o.no_return);
	assert_int_equal(o.max_events, 100);
	assert_true(o.duration_s > 2.49 && o.duration_s < 2.51);
	cmd_opts__free(&o);
}

/* Children are followed by default for a launched program only. */
static void test_follow_defaults(void **state)
{
	char *launch[] = { "trace", "--func", "f", "--", "./app", NULL };
	char *no[] = { "profile", "--func", "f", "--no-follow", "--", "./app", NULL };
	char *pid[] = { "trace", "--func", "f", "-p", "42", NULL };
	char *pid_follow[] = { "capture", "--func", "f", "-p", "42", "--follow", NULL };
	char *binary[] = { "trace", "--func", "f", "--binary", "/bin/true", "--no-follow", NULL };
	struct cmd_opts o;

	assert_int_equal(parse_words(CMD_TRACE, launch, &o), 0);
	assert_int_equal(o.follow, 1);
	cmd_opts__free(&o);
	assert_int_equal(parse_words(CMD_PROFILE, no, &o), 0);
	assert_int_equal(o.follow, 0);
	cmd_opts__free(&o);
	assert_int_equal(parse_words(CMD_TRACE, pid, &o), 0);
	assert_int_equal(o.follow, 0);
	cmd_opts__free(&o);
	assert_int_equal(parse_words(CMD_CAPTURE, pid_follow, &o), 0);
	assert_int_equal(o.follow, 1);
	cmd_opts__free(&o);
	assert_int_equal(parse_words(CMD_TRACE, binary, &o), -EINVAL);
	cmd_opts__free(&o);
}

static void test_trace_launch_without_dashdash(void **state)
{
	char *argv[] = { "trace", "--func", "f", "./app", "-v", NULL };
	struct cmd_opts o;

	assert_int_equal(parse_words(CMD_TRACE, argv, &o), 0);
	assert_int_equal(o.cmd_argc, 2);
	assert_string_equal(o.cmd[1], "-v");
	assert_int_equal(o.verbose, 0);
	cmd_opts__free(&o);
}

static void test_list_patterns_then_command(void **state)
{
	char *argv[] = { "list", "add", "six*", "--", "./calls", "calls", NULL };
	struct cmd_opts o;

	assert_int_equal(parse_words(CMD_LIST, argv, &o), 0);
	assert_int_equal(o.n_funcs, 2);
	assert_string_equal(o.funcs[1], "six*");
	assert_int_equal(o.cmd_argc, 2);
	assert_string_equal(o.cmd[0], "./calls");
	cmd_opts__free(&o);
}

/* Options after the first pattern are options (--exclude was taken for a
 * pattern); the program's own options after "--" stay its own. */
static void test_list_options_among_patterns(void **state)
{
	char *argv[] = { "list", "libc:*", "--exclude", "libc:_*", "-v", "read", "--", "rg",
			 "-x", "/tmp", NULL };
	struct cmd_opts o;

	assert_int_equal(parse_words(CMD_LIST, argv, &o), 0);
	assert_int_equal(o.n_funcs, 3);
	assert_string_equal(o.funcs[0], "libc:*");
	assert_string_equal(o.funcs[1], "!libc:_*");
	assert_string_equal(o.funcs[2], "read");
	assert_int_equal(o.verbose, 1);
	assert_int_equal(o.cmd_argc, 3);
	assert_string_equal(o.cmd[1], "-x");
	cmd_opts__free(&o);
}

static void test_list_pid(void **state)
{
	char *argv[] = { "list", "-p", "7", "sqlite3_*", NULL };
	struct cmd_opts o;

	assert_int_equal(parse_words(CMD_LIST, argv, &o), 0);
	assert_int_equal(o.n_pids, 1);
	assert_int_equal(o.n_funcs, 1);
	assert_null(o.cmd);
	cmd_opts__free(&o);
}

static void test_return_probe_choices(void **state)
{
	static const struct {
		const char *word;
		enum return_choice want;
	} cases[] = {
		{ "auto", RETURN_AUTO },
		{ "uretprobe", RETURN_FORCE_URETPROBE },
		{ "insn", RETURN_FORCE_INSN },
		{ "ret-insn", RETURN_FORCE_INSN },
		{ "none", RETURN_OFF },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = { "trace", "-p", "1", "-f", "x", "--return-probe",
				 (char *)cases[i].word, NULL };
		struct cmd_opts o;

		assert_int_equal(parse_words(CMD_TRACE, argv, &o), 0);
		assert_int_equal(o.ret_choice, cases[i].want);
		cmd_opts__free(&o);
	}
}

/* Every malformed command line is refused with -EINVAL (and one line on
 * stderr), never an exit from inside the parser. */
static void test_rejections(void **state)
{
	static char *cases[][MAX_ARGS] = {
		{ "trace", "-p", "1", NULL },                            /* no --func */
		{ "trace", "--func", "f", NULL },                        /* no target */
		{ "trace", "-p", "1", "--binary", "/bin/true", "-f", "f", NULL }, /* two targets */
		{ "trace", "-p", "1", "-f", "f", "--", "./app", NULL },  /* two targets */
		{ "trace", "-p", "abc", "-f", "f", NULL },
		{ "trace", "-p", "0", "-f", "f", NULL },
		{ "trace", "-p", "-5", "-f", "f", NULL },
		{ "trace", "-p", "99999999999", "-f", "f", NULL },
		{ "trace", "-p", "1", "-f", "f", "-F", "xml", NULL },
		{ "trace", "-p", "1", "-f", "f", "--duration", "0", NULL },
		{ "trace", "-p", "1", "-f", "f", "--duration", "soon", NULL },
		{ "trace", "-p", "1", "-f", "f", "--max-events", "0", NULL },
		{ "trace", "-p", "1", "-f", "f", "--return-probe", "maybe", NULL },
		{ "trace", "-p", "1", "-f", "f", "--ringbuf-size", "0", NULL },
		{ "trace", "-p", "1", "-f", "f", "--poll-ms", "x", NULL },
		{ "trace", "-p", "1", "-f", "f", "--bogus", NULL },
		{ "trace", "-p", NULL },                                 /* missing value */
		{ "trace", "--binary", "a", "--binary", "b", "-f", "f", NULL },
		{ "list", "-p", "1", NULL },                             /* no pattern */
		{ "trace", "-p", "1", "-f", "f", "--if", "a >", NULL },   /* malformed */
		{ "trace", "-p", "1", "-f", "f", "--if", "a", "--if", "b", NULL }, /* twice */
		{ "trace", "-p", "1", "-f", "f", "--on-change", "(a", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cmd_opts o;
		enum cmd_kind kind = !strcmp(cases[i][0], "list") ? CMD_LIST : CMD_TRACE;

		if (parse_words(kind, cases[i], &o) != -EINVAL)
			fail_msg("case %zu was accepted", i);
		cmd_opts__free(&o);
	}
}

/* One table: an option another command takes is refused by name (these
 * were accepted and ignored), and every row a command takes is in its
 * usage. */
static void test_option_not_for_this_command(void **state)
{
	static char *cases[][MAX_ARGS] = {
		{ "list", "--duration", "5", "f", "--", "/bin/true", NULL },
		{ "list", "-q", "f", "--", "/bin/true", NULL },
		{ "capture", "-F", "csv", "-f", "f", "--", "/bin/true", NULL },
		{ "capture", "--per-pid", "-f", "f", "--", "/bin/true", NULL },
		{ "trace", "--hist", "1", "-f", "f", "--", "/bin/true", NULL },
		{ "trace", "--chrome", "-f", "f", "--", "/bin/true", NULL },
		{ "profile", "--capture", "a=arg0:str", "-f", "f", "--", "/bin/true", NULL },
		{ "profile", "--max-events", "5", "-f", "f", "--", "/bin/true", NULL },
		{ "profile", "--on-change", "a", "-f", "f", "--", "/bin/true", NULL },
	};
	static const struct {
		const char *name;
		enum cmd_kind kind;
	} kinds[] = { { "list", CMD_LIST }, { "capture", CMD_CAPTURE }, { "trace", CMD_TRACE },
		      { "profile", CMD_PROFILE } };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum cmd_kind kind = CMD_TRACE;
		struct cmd_opts o;

		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (!strcmp(kinds[k].name, cases[i][0]))
				kind = kinds[k].kind;
		if (parse_words(kind, cases[i], &o) != -EINVAL)
			fail_msg("case %zu (%s %s) was accepted", i, cases[i][0], cases[i][1]);
		cmd_opts__free(&o);
	}
}

static void test_usage_lists_every_option(void **state)
{
	static const struct {
		enum cmd_kind kind;
		unsigned bit;
	} kinds[] = { { CMD_TRACE, OC_TRACE }, { CMD_CAPTURE, OC_CAPTURE },
		      { CMD_PROFILE, OC_PROFILE }, { CMD_LIST, OC_LIST } };

	(void)state;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		assert_non_null(f);
		cmd_opts__usage(kinds[k].kind, f);
		fclose(f);
		for (size_t i = 0; i < cmon_opt_n_rows; i++) {
			const struct opt_row *r = &cmon_opt_rows[i];
			unsigned cmds = 0;
			char want[64];

			if (!r->name)
				continue;
			for (size_t j = 0; j < cmon_opt_n_rows; j++) /* a name's rows */
				if (cmon_opt_rows[j].name && !strcmp(cmon_opt_rows[j].name, r->name))
					cmds |= cmon_opt_rows[j].cmds;
			/* In the option column: "  -x, --NAME" or "      --NAME". */
			snprintf(want, sizeof(want), "  --%s ", r->name);
			if (!!strstr(text, want) != !!(cmds & kinds[k].bit) &&
			    (snprintf(want, sizeof(want), ", --%s ", r->name), 1) &&
			    !!strstr(text, want) != !!(cmds & kinds[k].bit))
				fail_msg("usage %zu and %s disagree", k, want);
		}
		free(text);
	}
}

static void test_help(void **state)
{
	char *argv[] = { "trace", "--help", NULL };
	struct cmd_opts o;

	assert_int_equal(parse_words(CMD_TRACE, argv, &o), 0);
	assert_true(o.help);
	cmd_opts__free(&o);
}

static void test_profile_options(void **state)
{
	char *argv[] = { "profile", "-p", "42", "--func", "sqlite3_*", "--interval", "2.5",
			 "--per-pid", "--hist", "arg2", "--hist-linear", "-10,10,5", "--no-mem",
			 "-F", "json", "-o", "p.json", "--duration", "9", NULL };
	struct cmd_opts o;

	assert_int_equal(parse_words(CMD_PROFILE, argv, &o), 0);
	assert_int_equal(o.n_pids, 1);
	assert_int_equal(o.pids[0], 42);
	assert_int_equal(o.n_funcs, 1);
	assert_true(o.interval_s > 2.49 && o.interval_s < 2.51);
	assert_true(o.per_pid);
	assert_int_equal(o.hist_arg, 2);
	assert_true(o.hist_linear);
	assert_int_equal(o.lin_min, -10);
	assert_int_equal(o.lin_max, 10);
	assert_int_equal(o.lin_step, 5);
	assert_int_equal(o.lin_buckets, 4);
	assert_true(o.no_mem);
	assert_int_equal(o.format, OUT_JSON);
	assert_string_equal(o.output, "p.json");
	cmd_opts__free(&o);
}

static void test_profile_defaults(void **state)
{
	char *argv[] = { "profile", "--func", "f", "--", "./app", "x", NULL };
	struct cmd_opts o;

	assert_int_equal(parse_words(CMD_PROFILE, argv, &o), 0);
	assert_int_equal(o.hist_arg, -1); /* no histogram */
	assert_false(o.hist_linear);
	assert_false(o.per_pid);
	assert_false(o.no_mem);
	assert_true(o.interval_s == 0);  /* a report at the end only */
	assert_int_equal(o.cmd_argc, 2);
	cmd_opts__free(&o);
}

static void test_profile_hist_args(void **state)
{
	static const struct {
		const char *word;
		int want;
	} cases[] = {
		{ "0", 0 }, { "5", 5 }, { "arg0", 0 }, { "arg3", 3 }, { "arg5", 5 },
		/* names and ret: resolved from DWARF once the functions are known */
		{ "len", HIST_ARG_BY_NAME }, { "ret", HIST_ARG_BY_NAME }, { "arg", HIST_ARG_BY_NAME },
		{ "_n2", HIST_ARG_BY_NAME },
	};
	static const struct {
		const char *spec;
		int64_t min, max, step;
		unsigned buckets;
	} lin[] = {
		{ "0,65,1", 0, 65, 1, 65 },      /* the most buckets */
		{ "0,10,3", 0, 10, 3, 4 },       /* rounded up */
		{ "-100,-50,50", -100, -50, 50, 1 },
		{ "0x10,0x20,0x4", 16, 32, 4, 4 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = { "profile", "-p", "1", "-f", "x", "--hist", (char *)cases[i].word, NULL };
		struct cmd_opts o;

		assert_int_equal(parse_words(CMD_PROFILE, argv, &o), 0);
		assert_int_equal(o.hist_arg, cases[i].want);
		assert_string_equal(o.hist, cases[i].word);
		assert_false(o.hist_linear);
		cmd_opts__free(&o);
	}
	for (size_t i = 0; i < sizeof(lin) / sizeof(lin[0]); i++) {
		char *argv[] = { "profile", "-p", "1", "-f", "x", "--hist", "1", "--hist-linear",
				 (char *)lin[i].spec, NULL };
		struct cmd_opts o;

		assert_int_equal(parse_words(CMD_PROFILE, argv, &o), 0);
		assert_true(o.hist_linear);
		assert_int_equal(o.lin_min, lin[i].min);
		assert_int_equal(o.lin_max, lin[i].max);
		assert_int_equal(o.lin_step, lin[i].step);
		assert_int_equal(o.lin_buckets, lin[i].buckets);
		cmd_opts__free(&o);
	}
}

/* Profile's own mistakes, and options of one command given to the other. */
static void test_profile_rejections(void **state)
{
	static char *cases[][MAX_ARGS] = {
		{ "profile", "-p", "1", NULL },                                  /* no --func */
		{ "profile", "--func", "f", NULL },                              /* no target */
		{ "profile", "-p", "1", "-f", "f", "--hist", "6", NULL },
		{ "profile", "-p", "1", "-f", "f", "--hist", "a-b", NULL },
		{ "profile", "-p", "1", "-f", "f", "--hist", "", NULL },
		{ "profile", "-p", "1", "-f", "f", "--hist", "-1", NULL },
		{ "profile", "-p", "1", "-f", "f", "--hist", "01", NULL },
		{ "profile", "-p", "1", "-f", "f", "--hist-linear", "0,10,1", NULL }, /* no --hist */
		{ "profile", "-p", "1", "-f", "f", "--hist", "0", "--hist-linear", "10,0,1", NULL },
		{ "profile", "-p", "1", "-f", "f", "--hist", "0", "--hist-linear", "0,66,1", NULL },
		{ "profile", "-p", "1", "-f", "f", "--hist", "0", "--hist-linear", "0,10,0", NULL },
		{ "profile", "-p", "1", "-f", "f", "--hist", "0", "--hist-linear", "0,10,-1", NULL },
		{ "profile", "-p", "1", "-f", "f", "--hist", "0", "--hist-linear", "0,10", NULL },
		{ "profile", "-p", "1", "-f", "f", "--hist", "0", "--hist-linear", "a,b,c", NULL },
		{ "profile", "-p", "1", "-f", "f", "--interval", "0", NULL },
		{ "profile", "-p", "1", "-f", "f", "--interval", "soon", NULL },
		{ "profile", "-p", "1", "-f", "f", "--no-return", NULL },        /* trace only */
		{ "profile", "-p", "1", "-f", "f", "--max-events", "5", NULL },
		{ "profile", "-p", "1", "-f", "f", "--poll-ms", "5", NULL },
		{ "profile", "-p", "1", "-f", "f", "--ringbuf-size", "1", NULL },
		{ "trace", "-p", "1", "-f", "f", "--interval", "1", NULL },      /* profile only */
		{ "trace", "-p", "1", "-f", "f", "--per-pid", NULL },
		{ "trace", "-p", "1", "-f", "f", "--hist", "0", NULL },
		{ "trace", "-p", "1", "-f", "f", "--no-mem", NULL },
		{ "list", "-p", "1", "--per-pid", "f", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cmd_opts o;
		enum cmd_kind kind = !strcmp(cases[i][0], "list")	    ? CMD_LIST
				     : !strcmp(cases[i][0], "profile") ? CMD_PROFILE
								       : CMD_TRACE;

		if (parse_words(kind, cases[i], &o) != -EINVAL)
			fail_msg("case %zu was accepted", i);
		cmd_opts__free(&o);
	}
}

/* cmon break and trace --watch. */
static void test_break_and_watch(void **state)
{
	char *brk[] = { "break", "--func", "tick", "--", "./app", NULL };
	char *brk2[] = { "break", "-p", "7", "-f", "tick", "--count", "3", "--resume-after", "0.2",
			 NULL };
	char *watch[] = { "trace", "-p", "7", "--watch", "counter", "--watch", "0x1000:4", NULL };
	static char *bad[][MAX_ARGS] = {
		{ "break", "-f", "tick", NULL },                              /* no target */
		{ "break", "-p", "1", NULL },                                 /* no --func */
		{ "break", "-p", "1", "-p", "2", "-f", "tick", NULL },        /* one process */
		{ "break", "--binary", "/bin/true", "-f", "tick", NULL },     /* not for break */
		{ "break", "-p", "1", "-f", "tick", "--count", "0", NULL },
		{ "break", "-p", "1", "-f", "tick", "--resume-after", "-1", NULL },
		{ "break", "-p", "1", "-f", "tick", "--if", "x >", NULL },    /* malformed */
		{ "break", "-p", "1", "-f", "tick", "-F", "json", NULL },     /* text only */
		{ "trace", "--binary", "/bin/true", "--watch", "x", NULL },   /* one process */
		{ "trace", "-p", "1", "-p", "2", "--watch", "x", NULL },
		{ "trace", "-p", "1", "--watch", "x", "-F", "chrome", NULL },
		{ "trace", "-p", "1", "--watch", "x", "-f", "f", "-F", "csv", NULL },
		{ "trace", "-p", "1", "--watch", "x", "-o", "out.%p", NULL },
		{ "profile", "-p", "1", "-f", "f", "--watch", "x", NULL },    /* trace only */
		{ "trace", "-p", "1", "-f", "f", "--count", "2", NULL },      /* break only */
	};
	char *nine[] = { "trace", "-p", "1", "--watch", "a", "--watch", "b", "--watch", "c",
			 "--watch", "d", "--watch", "e", "--watch", "f", "--watch", "g", "--watch",
			 "h", "--watch", "i", NULL }; /* more than CMON_MAX_WATCH */
	struct cmd_opts o;

	assert_int_equal(parse_words(CMD_BREAK, brk, &o), 0);
	assert_int_equal(o.break_count, 1);
	assert_true(o.resume_after_s < 0); /* on Enter */
	assert_string_equal(o.cmd[0], "./app");
	cmd_opts__free(&o);
	assert_int_equal(parse_words(CMD_BREAK, brk2, &o), 0);
	assert_int_equal(o.break_count, 3);
	assert_true(o.resume_after_s > 0.19 && o.resume_after_s < 0.21);
	cmd_opts__free(&o);
	assert_int_equal(parse_words(CMD_TRACE, watch, &o), 0); /* no --func needed */
	assert_int_equal(o.n_watches, 2);
	assert_string_equal(o.watches[1], "0x1000:4");
	cmd_opts__free(&o);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum cmd_kind kind = !strcmp(bad[i][0], "break")     ? CMD_BREAK
				     : !strcmp(bad[i][0], "profile") ? CMD_PROFILE
								     : CMD_TRACE;

		if (parse_words(kind, bad[i], &o) != -EINVAL)
			fail_msg("case %zu was accepted", i);
		cmd_opts__free(&o);
	}
	assert_int_equal(parse_words(CMD_TRACE, nine, &o), -EINVAL);
	cmd_opts__free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_pid_and_funcs),
		cmocka_unit_test(test_trace_launch),
		cmocka_unit_test(test_follow_defaults),
		cmocka_unit_test(test_trace_launch_without_dashdash),
		cmocka_unit_test(test_list_patterns_then_command),
		cmocka_unit_test(test_list_options_among_patterns),
		cmocka_unit_test(test_list_pid),
		cmocka_unit_test(test_return_probe_choices),
		cmocka_unit_test(test_rejections),
		cmocka_unit_test(test_if_and_on_change),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_option_not_for_this_command),
		cmocka_unit_test(test_usage_lists_every_option),
		cmocka_unit_test(test_profile_options),
		cmocka_unit_test(test_profile_defaults),
		cmocka_unit_test(test_profile_hist_args),
		cmocka_unit_test(test_profile_rejections),
		cmocka_unit_test(test_break_and_watch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
