// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * text.c: a table for a person at an 80-100 column terminal.
 *
 *   TIME            PID/TID       LATENCY     dRSS CALL
 *   22:13:20.123456 4242/4243       812ns        0 parse(s="abc", n=3) = 0
 *
 * The fixed columns come first (47 characters); the call, as C would write
 * it, last and unpadded: its arguments and return value have any width.
 * On a terminal the line is cut at its width, the arguments first so that
 * the return value stays; strings are cut at --text-strlen characters.
 * Names are sanitised: control characters (C0, DEL, C1) and bytes that are
 * not valid UTF-8 show as '?', so a hostile process name cannot drive the
 * terminal.
 */
#include <time.h>
#include "writer_impl.h"

enum {
	TIME_W = 15,   /* HH:MM:SS.uuuuuu */
	IDS_W = 13,    /* "123456/123457"; longer ids push the row on */
	INDENT_MAX = 16, /* deeper calls keep this indent so the name shows */
	LAT_W = 7,     /* "<12.3us" */
	RSS_W = 8,     /* "+1023.9K" */
	/* The fixed columns, each at most 20 bytes, the raw arguments and
	 * return value, colour escapes: far below this (names are reserved
	 * apart, 4 bytes a glyph). */
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

/* S with each glyph that must not reach a terminal as '?'.  A glyph is
 * counted as one column (no East Asian width). */
static char *name(char *p, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0;
	bool show;

	while (i < n) {
		size_t len = glyph(s + i, n - i, &show);

		if (show)
			p = wr_mem(p, s + i, len);
		else
			*p++ = '?';
		i += len;
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
#define ELLIPSIS "\xe2\x80\xa6" /* U+2026: what was cut */

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
	p = cell(p, "PID/TID", 7, IDS_W, false);
	p = cell(p, "LATENCY", 7, LAT_W, true);
	p = cell(p, "dRSS", 4, RSS_W, true);
	p = WR_LIT(p, "CALL");
	if (color)
		p = WR_LIT(p, SGR_NORMAL);
	*p++ = '\n';
	sb->len = (size_t)(p - sb->buf);
	return 0;
}

/* JSON text V appended with each string value longer than MAX characters
 * (an escape or a UTF-8 glyph is one) cut to MAX and "…" (MAX 0: whole).
 * Object keys stay whole: they name what follows. */
static int cut_strings(struct strbuf *sb, const char *v, unsigned max)
{
	const char *s = v, *v_end = v + strlen(v);
	int err = 0;

	while (!err && *s) {
		const char *q, *end, *cut = NULL;
		unsigned n = 0;

		if (*s != '"' || !max) {
			q = max ? strchr(s, '"') : NULL;
			q = q ? q : s + strlen(s);
			err = strbuf__putn(sb, s, (size_t)(q - s));
			s = q;
			continue;
		}
		for (q = s + 1; *q && *q != '"'; n++) {
			if (n == max)
				cut = q;
			if (*q == '\\')
				q += v_end - q >= 6 && q[1] == 'u' ? 6 : q[1] ? 2 : 1;
			else
				q += wr_utf8_len((const unsigned char *)q, (size_t)(v_end - q)) ?: 1;
		}
		end = *q ? q + 1 : q; /* past the closing quote */
		while (*end == ' ')
			end++;
		if (!cut || *end == ':') {
			err = strbuf__putn(sb, s, (size_t)(end - s));
		} else {
			err = strbuf__putn(sb, s, (size_t)(cut - s));
			if (!err)
				err = strbuf__puts(sb, ELLIPSIS "\"");
		}
		s = end;
	}
	return err;
}

/* Columns that S (N bytes) takes on a terminal: its glyphs, not counting
 * SGR escapes (ESC [ ... m). */
static size_t columns(const char *s, size_t n, size_t *cut_after, size_t want)
{
	size_t cols = 0, i = 0;

	while (i < n) {
		if (s[i] == '\033') {
			while (i < n && s[i] != 'm')
				i++;
			i++;
			continue;
		}
		if (cut_after && cols == want) {
			*cut_after = i;
			return cols;
		}
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			cols++;
		i++;
		while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
	}
	if (cut_after)
		*cut_after = n;
	return cols;
}

/* The row SB holds from START (no line end yet) made to fit WIDTH columns:
 * the notes after TAIL dropped, then its arguments (HEAD..ARGS) cut so
 * that the rest of the call (ARGS..TAIL: ")", the return value) still
 * shows; or, when even that does not fit, the row itself cut.  "…" marks
 * the cut. */
static int fit(struct strbuf *sb, size_t start, size_t head, size_t args, size_t tail,
	       unsigned width, bool color)
{
	char *b = sb->buf;
	size_t hw, aw, tw, keep, at;
	int err;

	if (!width || columns(b + start, sb->len - start, NULL, 0) <= width)
		return 0;
	err = strbuf__reserve(sb, 16 + 2 * sizeof(SGR_NORMAL SGR_DEFAULT));
	if (err)
		return err;
	b = sb->buf;
	hw = columns(b + start, head - start, NULL, 0);
	aw = columns(b + head, args - head, NULL, 0);
	tw = columns(b + args, tail - args, NULL, 0);
	if (hw + aw + tw + 1 <= width) { /* only notes to drop */
		sb->len = tail;
		return strbuf__puts(sb, ELLIPSIS);
	}
	if (aw && hw + 1 + tw <= width) {
		keep = width - hw - tw - 1;
		columns(b + head, args - head, &at, keep);
		memmove(b + head + at + strlen(ELLIPSIS), b + args, tail - args);
		memcpy(b + head + at, ELLIPSIS, strlen(ELLIPSIS));
		sb->len = head + at + strlen(ELLIPSIS) + (tail - args);
		return 0;
	}
	columns(b + start, sb->len - start, &at, width - 1);
	sb->len = start + at;
	if (color)
		return strbuf__puts(sb, SGR_NORMAL SGR_DEFAULT ELLIPSIS);
	return strbuf__puts(sb, ELLIPSIS);
}

/* The call's arguments: typed "name=value, ...", else the six registers. */
static int put_args(struct strbuf *sb, const struct call_record *rec, const struct text_opts *o)
{
	const struct call_typed *t = rec->typed;
	char *p;
	int err = 0;

	if (t) {
		for (size_t i = 0; i < t->n_cells && !err; i++) {
			err = strbuf__printf(sb, "%s%s=", i ? ", " : "", t->names[i]);
			if (!err)
				err = cut_strings(sb, call_typed__text(t, t->cells[i]), o->strcut);
		}
		return err;
	}
	err = strbuf__reserve(sb, 6 * 24);
	if (err)
		return err;
	p = sb->buf + sb->len;
	for (int i = 0; i < 6; i++) {
		if (i)
			p = WR_LIT(p, ", ");
		p = rec->args_unsigned >> i & 1 && rec->args[i] < 0
			    ? hex(p, (uint64_t)rec->args[i]) /* above INT64_MAX: large */
			    : value(p, rec->args[i]);
	}
	sb->len = (size_t)(p - sb->buf);
	return 0;
}

/* What the call gave back: " = VALUE", or its status where a value would
 * be (yellow on a terminal); nothing for a call that has none to give
 * (void, --no-return, a USDT probe, a line). */
static int put_return(struct strbuf *sb, const struct call_record *rec, const struct text_opts *o)
{
	const char *status = NULL;
	char num[24];
	int err = 0;

	switch (rec->status) {
	case CALL_OK:
		if (rec->typed && rec->typed->returns_void)
			return 0;
		if (wr_text_typed_ret(rec)) {
			err = strbuf__puts(sb, " = ");
			return err ? err : cut_strings(sb, call_typed__text(rec->typed,
									    rec->typed->retval),
						       o->strcut);
		}
		*value(num, rec->ret) = '\0';
		return strbuf__printf(sb, " = %s", num);
	case CALL_NORETURN:
		status = "<noreturn>";
		break;
	case CALL_TAILCALL:
		status = "<tail>";
		break;
	case CALL_NEVER_RETURNS:
		status = "<never-returns>";
		break;
	case CALL_RAISED:
	case CALL_YIELD:
		/* --py: the exception, the value yielded (as a return's) */
		status = rec->status == CALL_RAISED ? "raise" : "yield";
		break;
	default:
		return 0;
	}
	err = strbuf__printf(sb, " %s%s%s", o->color ? SGR_YELLOW : "", status,
			     o->color ? SGR_DEFAULT : "");
	if (!err && (rec->status == CALL_RAISED || rec->status == CALL_YIELD) &&
	    wr_text_typed_ret(rec)) {
		err = strbuf__puts(sb, " ");
		if (!err)
			err = cut_strings(sb, call_typed__text(rec->typed, rec->typed->retval),
					  o->strcut);
	}
	return err;
}

int writer__text_row(struct strbuf *sb, struct text_clock *clk, const struct call_record *rec,
		     const struct text_opts *o)
{
	char tmp[48], *p, *q;
	size_t start = sb->len, indent = 0, head, args, tail;
	bool parens = wr_has_args(rec); /* a line has none, but --locals */
	int err;

	err = strbuf__reserve(sb, ROW_MAX + 4 * strlen(wr_str(rec->func)));
	if (err)
		return err;
	p = sb->buf + sb->len;
	p = wall_time(p, clk, rec->ts_ns);
	*p++ = ' ';
	q = decimal__u64(tmp, rec->pid);
	*q++ = '/';
	q = decimal__u64(q, rec->tid);
	p = cell(p, tmp, (size_t)(q - tmp), IDS_W, false);

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

	if (rec->depth > 0)
		indent = (size_t)rec->depth * 2 > INDENT_MAX ? INDENT_MAX : (size_t)rec->depth * 2;
	p = pad(p, indent);
	if (o->color)
		p = WR_LIT(p, SGR_BOLD);
	p = name(p, wr_str(rec->func));
	if (o->color)
		p = WR_LIT(p, SGR_NORMAL);
	if (parens)
		*p++ = '(';
	sb->len = (size_t)(p - sb->buf);
	head = sb->len;
	err = parens ? put_args(sb, rec, o) : 0;
	args = sb->len;
	if (!err && parens)
		err = strbuf__putc(sb, ')');
	if (!err)
		err = put_return(sb, rec, o);
	tail = sb->len;
	if (!err)
		err = writer__typed_notes(sb, rec->typed);
	if (!err)
		err = fit(sb, start, head, args, tail, o->width, o->color);
	if (!err)
		err = strbuf__putc(sb, '\n');
	if (!err && rec->stack)
		err = writer__text_stack(sb, rec->stack);
	return err;
}
