// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * text.c: an aligned table for a person at a terminal.
 *
 *   TIME                PID     TID COMM            FUNC ...  RET  LATENCY  dRSS ARGS
 *
 * ARGS comes last, unpadded: six values of any width would break the
 * alignment of every column after them.  Names are sanitised: control
 * characters (C0, DEL, C1) and bytes that are not valid UTF-8 show as '?',
 * so a hostile process name cannot drive the terminal.
 */
#include <time.h>
#include "writer_impl.h"

enum {
	TIME_W = 15,   /* HH:MM:SS.uuuuuu */
	PID_W = 7,     /* pid_max is at most 4194304 */
	COMM_W = 15,   /* TASK_COMM_LEN - 1 */
	FUNC_W = 32,
	INDENT_MAX = 16, /* deeper calls keep this indent so the name shows */
	RET_W = 14,    /* a 48-bit user pointer in hex */
	LAT_W = 8,
	RSS_W = 8,
	/* Every fixed-width part of a row, each value at most 20 bytes, names
	 * at most 4 bytes per glyph: far below this. */
	ROW_MAX = 1024,
};

static char *pad(char *p, size_t n)
{
	memset(p, ' ', n);
	return p + n;
}

/* S (N bytes, printable ASCII) in a column of WIDTH, then one space. */
static char *cell(char *p, const char *s, size_t n, size_t width, bool right)
{
	size_t fill = n < width ? width - n : 0;

	if (right)
		p = pad(p, fill);
	p = wr_mem(p, s, n);
	if (!right)
		p = pad(p, fill);
	*p++ = ' ';
	return p;
}

/* Bytes in the glyph at S; *SHOW is false when it must print as '?'. */
static size_t glyph(const unsigned char *s, size_t n, bool *show)
{
	size_t len;

	if (s[0] < 0x80) {
		*show = s[0] >= 0x20 && s[0] != 0x7f;
		return 1;
	}
	len = wr_utf8_len(s, n);
	if (!len) {
		*show = false;
		return 1;
	}
	*show = !(s[0] == 0xc2 && s[1] < 0xa0); /* U+0080..U+009F: C1 */
	return len;
}

/* At most MAX glyphs of S; a longer name is cut to MAX - 1 glyphs and
 * MARK ("+") when MARK is set.  *WIDTH gets the glyphs written.  A glyph
 * is counted as one column (no East Asian width). */
static char *name(char *p, const char *str, size_t max, bool mark, size_t *width)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), total = 0, limit, i;
	bool show;

	for (i = 0; i < n && total <= max; total++)
		i += glyph(s + i, n - i, &show);
	limit = total > max && mark ? max - 1 : total > max ? max : total;
	for (i = 0, *width = 0; *width < limit; (*width)++) {
		size_t len = glyph(s + i, n - i, &show);

		if (show)
			p = wr_mem(p, s + i, len);
		else
			*p++ = '?';
		i += len;
	}
	if (total > max && mark) {
		*p++ = '+';
		(*width)++;
	}
	return p;
}

static char *two(char *p, unsigned v)
{
	return wr_mem(p, decimal__digits2 + 2 * (v % 100), 2);
}

static char *wall_time(char *p, struct text_clock *clk, uint64_t ts_ns)
{
	int64_t sec = (int64_t)(ts_ns / 1000000000);
	unsigned us = (unsigned)(ts_ns % 1000000000 / 1000);

	if (sec != clk->sec) {
		time_t t = (time_t)sec;
		struct tm tm = { 0 };
		char *q = clk->hms;

		localtime_r(&t, &tm);
		q = two(q, (unsigned)tm.tm_hour);
		*q++ = ':';
		q = two(q, (unsigned)tm.tm_min);
		*q++ = ':';
		two(q, (unsigned)tm.tm_sec);
		clk->sec = sec;
	}
	p = wr_mem(p, clk->hms, sizeof(clk->hms));
	*p++ = '.';
	p = two(p, us / 10000);
	p = two(p, us / 100);
	return two(p, us);
}

/* Small values in decimal, the rest (pointers, masks) in hex. */
static char *hex(char *p, uint64_t u)
{
	int shift = 60;

	p = WR_LIT(p, "0x");
	while (shift > 0 && !(u >> shift))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = "0123456789abcdef"[(u >> shift) & 0xf];
	return p;
}

static char *value(char *p, int64_t v)
{
	if (v > -1000000 && v < 1000000)
		return decimal__i64(p, v);
	return hex(p, (uint64_t)v);
}

/* SCALED with DEC decimals (0..2). */
static char *fixed(char *p, uint64_t scaled, unsigned dec)
{
	static const unsigned pow10[] = { 1, 10, 100 };

	p = decimal__u64(p, scaled / pow10[dec]);
	if (dec) {
		*p++ = '.';
		if (dec == 2)
			*p++ = (char)('0' + scaled / 10 % 10);
		*p++ = (char)('0' + scaled % 10);
	}
	return p;
}

/* "812ns", "12.3us", "4.56ms", "1.20s": three significant digits. */
static char *duration(char *p, uint64_t ns)
{
	static const struct { uint64_t div; const char *unit; } units[] = {
		{ 1000, "us" }, { 1000000, "ms" }, { 1000000000, "s" },
	};
	static const unsigned pow10[] = { 1, 10, 100 };

	if (ns < 1000)
		return WR_LIT(decimal__u64(p, ns), "ns");
	for (unsigned k = 0; k < 3; k++) {
		for (int dec = 2; dec >= 0; dec--) {
			uint64_t div = units[k].div;
			/* Rounded; 128 bits because ns * 100 can overflow. */
			uint64_t scaled = (uint64_t)(((unsigned __int128)ns * pow10[dec] +
						      div / 2) / div);

			/* 999.6us rounds to 1000: go on to "1.00ms". */
			if (scaled < 1000 || (k == 2 && dec == 0)) {
				p = fixed(p, scaled, (unsigned)dec);
				return wr_mem(p, units[k].unit, strlen(units[k].unit));
			}
		}
	}
	return p; /* not reached */
}

/* Signed size change: "0", "+512B", "-4.0K", "+64.0M". */
static char *bytes_delta(char *p, int64_t d)
{
	static const char units[] = "KMGTPE";
	uint64_t mag = d < 0 ? 0 - (uint64_t)d : (uint64_t)d;
	unsigned k = 0;
	uint64_t scaled;

	if (!d)
		return WR_LIT(p, "0");
	*p++ = d < 0 ? '-' : '+';
	if (mag < 1024)
		return WR_LIT(decimal__u64(p, mag), "B");
	while (k < 5 && mag >> (10 * (k + 2)))
		k++;
	/* Tenths, rounded; 1023.96K rounds to 1024.0K: show 1.0M. */
	scaled = (uint64_t)(((unsigned __int128)mag * 10 + (1ull << (10 * (k + 1) - 1))) >>
			    (10 * (k + 1)));
	if (scaled >= 10240 && k < 5) {
		k++;
		scaled = (uint64_t)(((unsigned __int128)mag * 10 +
				     (1ull << (10 * (k + 1) - 1))) >> (10 * (k + 1)));
	}
	p = fixed(p, scaled, 1);
	*p++ = units[k];
	return p;
}

/* Select Graphic Rendition: bold on and off, yellow on and off. */
#define SGR_BOLD "\033[1m"
#define SGR_NORMAL "\033[22m"
#define SGR_YELLOW "\033[33m"
#define SGR_DEFAULT "\033[39m"

int writer__text_header(struct strbuf *sb, bool color)
{
	int err = strbuf__reserve(sb, ROW_MAX);
	char *p;

	if (err)
		return err;
	p = sb->buf + sb->len;
	if (color)
		p = WR_LIT(p, SGR_BOLD);
	p = cell(p, "TIME", 4, TIME_W, false);
	p = cell(p, "PID", 3, PID_W, true);
	p = cell(p, "TID", 3, PID_W, true);
	p = cell(p, "COMM", 4, COMM_W, false);
	p = cell(p, "FUNC", 4, FUNC_W, false);
	p = cell(p, "RET", 3, RET_W, true);
	p = cell(p, "LATENCY", 7, LAT_W, true);
	p = cell(p, "dRSS", 4, RSS_W, true);
	p = WR_LIT(p, "ARGS");
	if (color)
		p = WR_LIT(p, SGR_NORMAL);
	*p++ = '\n';
	sb->len = (size_t)(p - sb->buf);
	return 0;
}

int writer__text_row(struct strbuf *sb, struct text_clock *clk, const struct call_record *rec,
		     bool color, size_t *args_at)
{
	char tmp[WR_TEXT_RET_MAX + 16], *p, *q;
	size_t indent = 0, width;
	int err;

	err = strbuf__reserve(sb, ROW_MAX);
	if (err)
		return err;
	p = sb->buf + sb->len;
	p = wall_time(p, clk, rec->ts_ns);
	*p++ = ' ';
	p = cell(p, tmp, (size_t)(decimal__u64(tmp, rec->pid) - tmp), PID_W, true);
	p = cell(p, tmp, (size_t)(decimal__u64(tmp, rec->tid) - tmp), PID_W, true);

	p = name(p, wr_str(rec->comm), COMM_W, false, &width);
	p = pad(p, COMM_W - width + 1);

	if (rec->depth > 0)
		indent = (size_t)rec->depth * 2 > INDENT_MAX ? INDENT_MAX : (size_t)rec->depth * 2;
	p = pad(p, indent);
	if (color)
		p = WR_LIT(p, SGR_BOLD);
	p = name(p, wr_str(rec->func), FUNC_W - indent, true, &width);
	if (color)
		p = WR_LIT(p, SGR_NORMAL);
	p = pad(p, FUNC_W - indent - width + 1);

	switch (rec->status) {
	case CALL_OK:
		if (rec->typed && rec->typed->returns_void) {
			q = WR_LIT(tmp, "void");
			break;
		}
		/* The typed return value when DWARF gives one: here when it
		 * fits, else after the arguments (never the raw rax instead). */
		if (wr_text_typed_ret(rec)) {
			const char *v = call_typed__text(rec->typed, rec->typed->retval);

			if (strlen(v) < WR_TEXT_RET_MAX)
				q = wr_mem(tmp, v, strlen(v));
			else
				q = WR_LIT(tmp, "(retval=)");
			break;
		}
		q = value(tmp, rec->ret);
		break;
	case CALL_NORETURN:
		q = WR_LIT(tmp, "<noreturn>");
		break;
	case CALL_TAILCALL:
		q = WR_LIT(tmp, "<tail>");
		break;
	case CALL_NEVER_RETURNS:
		q = WR_LIT(tmp, "<never-returns>");
		break;
	case CALL_RAISED:
	case CALL_YIELD:
		/* --py: the exception, the value yielded (as a return's) */
		q = rec->status == CALL_RAISED ? WR_LIT(tmp, "raise ") : WR_LIT(tmp, "yield ");
		if (wr_text_typed_ret(rec)) {
			const char *v = call_typed__text(rec->typed, rec->typed->retval);

			if (strlen(v) < WR_TEXT_RET_MAX) /* after "raise " */
				q = wr_mem(q, v, strlen(v));
			else
				q = WR_LIT(q, "(retval=)");
		}
		break;
	default:
		q = WR_LIT(tmp, "-");
		break;
	}
	if (color && rec->status != CALL_OK) {
		/* a status, not a value: set apart (right-aligned as the cell) */
		size_t n = (size_t)(q - tmp);

		p = pad(p, n < RET_W ? RET_W - n : 0);
		p = WR_LIT(p, SGR_YELLOW);
		p = wr_mem(p, tmp, n);
		p = WR_LIT(p, SGR_DEFAULT);
		*p++ = ' ';
	} else {
		p = cell(p, tmp, (size_t)(q - tmp), RET_W, true);
	}

	if (wr_has_exit(rec)) {
		q = tmp;
		if (rec->latency_lt_ns)
			*q++ = '<'; /* a bound: not measured (README: latencies) */
		q = duration(q, rec->latency_lt_ns ? rec->latency_lt_ns : rec->latency_ns);
		p = cell(p, tmp, (size_t)(q - tmp), LAT_W, true);
		q = bytes_delta(tmp, (int64_t)(rec->rss_exit - rec->rss_entry));
		p = cell(p, tmp, (size_t)(q - tmp), RSS_W, true);
	} else {
		p = cell(p, "-", 1, LAT_W, true);
		p = cell(p, "-", 1, RSS_W, true);
	}

	if (args_at)
		*args_at = (size_t)(p - sb->buf);
	for (int i = 0; i < 6 && rec->status != CALL_LINE; i++) { /* a line has none */
		if (i)
			*p++ = ' ';
		p = rec->args_unsigned >> i & 1 && rec->args[i] < 0
			    ? hex(p, (uint64_t)rec->args[i]) /* above INT64_MAX: large */
			    : value(p, rec->args[i]);
	}
	*p++ = '\n';
	sb->len = (size_t)(p - sb->buf);
	return 0;
}
