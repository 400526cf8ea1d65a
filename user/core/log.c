// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <bpf/libbpf.h>
#include "log.h"

static enum log_level current_level = LOG_WARN;
static __thread log_sink_fn sink_fn;
static __thread void *sink_ctx;

void log_set_sink(log_sink_fn fn, void *ctx)
{
	sink_fn = fn;
	sink_ctx = ctx;
}

/*
 * A message quotes what the user typed or a file held (an expression, a
 * path, a store's text): a newline or an escape sequence in it would break
 * the one-line error or reach the terminal raw.  So the whole message goes
 * out on one line, control characters written as \n, \r, \t or \xHH
 * (bytes from 0x80 pass: UTF-8 names stay readable).  Trailing newlines
 * are dropped.  The result is malloc'd; NULL when out of memory.
 */
static char *one_line(const char *fmt, va_list ap)
{
	static const char hex[] = "0123456789abcdef";
	char *raw = NULL, *out, *p;
	int n = vasprintf(&raw, fmt, ap);

	if (n < 0)
		return NULL;
	while (n && raw[n - 1] == '\n')
		raw[--n] = 0;
	out = malloc((size_t)n * 4 + 1);
	if (!out) {
		free(raw);
		return NULL;
	}
	p = out;
	for (const unsigned char *c = (const unsigned char *)raw; *c; c++) {
		if (*c >= 0x20 && *c != 0x7f) {
			*p++ = (char)*c;
			continue;
		}
		*p++ = '\\';
		if (*c == '\n' || *c == '\r' || *c == '\t') {
			*p++ = *c == '\n' ? 'n' : *c == '\r' ? 'r' : 't';
		} else {
			*p++ = 'x';
			*p++ = hex[*c >> 4];
			*p++ = hex[*c & 15];
		}
	}
	*p = 0;
	free(raw);
	return out;
}

void log_set_level(enum log_level level) { current_level = level; }
enum log_level log_get_level(void) { return current_level; }

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;
	char *text;

	if (level > current_level)
		return;
	va_start(ap, fmt);
	text = one_line(fmt, ap);
	va_end(ap);
	if (sink_fn) {
		sink_fn(sink_ctx, level, text ? text : "(out of memory formatting a message)");
	} else {
		fputs("cmon: ", stderr);
		if (level == LOG_WARN)
			fputs("warning: ", stderr);
		fputs(text ? text : "(out of memory formatting a message)", stderr);
		fputc('\n', stderr);
	}
	free(text);
}

void log_report(const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = one_line(fmt, ap);
	va_end(ap);
	if (sink_fn) {
		sink_fn(sink_ctx, LOG_INFO, text ? text : "(out of memory formatting a message)");
	} else {
		fputs("cmon: ", stderr);
		fputs(text ? text : "(out of memory formatting a message)", stderr);
		fputc('\n', stderr);
	}
	free(text);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's warnings are noise unless asked for: a failed attach is
	 * reported by cmon itself in one line. */
	enum log_level mapped = level == LIBBPF_WARN ? LOG_INFO : LOG_DEBUG;

	if (mapped > current_level)
		return 0;
	if (sink_fn) {
		char *text = one_line(fmt, ap), *line = NULL;

		if (!text || asprintf(&line, "libbpf: %s", text) < 0)
			line = NULL;
		sink_fn(sink_ctx, mapped, line ? line : "libbpf: (out of memory formatting a message)");
		free(line);
		free(text);
		return 0;
	}
	fputs("libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

void log_route_libbpf(void) { libbpf_set_print(libbpf_print); }
