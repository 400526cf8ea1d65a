// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
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

/* To the sink, in one piece (PREFIX + FMT, no trailing newline). */
static void to_sink(enum log_level level, const char *prefix, const char *fmt, va_list ap)
{
	char buf[2048];
	size_t n = strlen(prefix);

	memcpy(buf, prefix, n);
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	sink_fn(sink_ctx, level, buf);
}

void log_set_level(enum log_level level) { current_level = level; }
enum log_level log_get_level(void) { return current_level; }

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > current_level)
		return;
	if (sink_fn) {
		va_start(ap, fmt);
		to_sink(level, "", fmt, ap);
		va_end(ap);
		return;
	}
	fputs("cmon: ", stderr);
	if (level == LOG_WARN)
		fputs("warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's warnings are noise unless asked for: a failed attach is
	 * reported by cmon itself in one line. */
	enum log_level mapped = level == LIBBPF_WARN ? LOG_INFO : LOG_DEBUG;

	if (mapped > current_level)
		return 0;
	if (sink_fn) {
		to_sink(mapped, "libbpf: ", fmt, ap);
		return 0;
	}
	fputs("libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

void log_route_libbpf(void) { libbpf_set_print(libbpf_print); }
