// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pyvalue.c: see pyvalue.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc/procmem.h"
#include "python/pyvalue.h"

static void free_values(struct hmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			free((char *)(uintptr_t)m->slots[i].value);
	hmap__release(m);
}

void pyvalue__release(struct pyvalue_ctx *vc)
{
	free_values(&vc->types);
	free_values(&vc->names);
}

static void utf8_put(char **q, uint32_t c)
{
	char *p = *q;

	if (c < 0x80) {
		*p++ = (char)c;
	} else if (c < 0x800) {
		*p++ = (char)(0xc0 | c >> 6);
		*p++ = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		*p++ = (char)(0xe0 | c >> 12);
		*p++ = (char)(0x80 | (c >> 6 & 0x3f));
		*p++ = (char)(0x80 | (c & 0x3f));
	} else {
		*p++ = (char)(0xf0 | c >> 18);
		*p++ = (char)(0x80 | (c >> 12 & 0x3f));
		*p++ = (char)(0x80 | (c >> 6 & 0x3f));
		*p++ = (char)(0x80 | (c & 0x3f));
	}
	*q = p;
}

/* A compact str's code points (KIND bytes each, LEN of them, at DATA) as
 * UTF-8. */
static char *str_wide(pid_t pid, uint64_t data, uint64_t len, unsigned kind)
{
	unsigned char *raw = malloc(len * kind + 1);
	char *out = malloc(len * 4 + 1), *q = out;

	if (!raw || !out || procmem__read(pid, data, raw, len * kind)) {
		free(raw);
		free(out);
		return NULL;
	}
	for (uint64_t i = 0; i < len; i++)
		utf8_put(&q, kind == 1 ? raw[i] : kind == 2 ? ((uint16_t *)raw)[i]
							    : ((uint32_t *)raw)[i]);
	*q = 0;
	free(raw);
	return out;
}

/* The str at OBJ with layout L (the compact form's size from it). */
static char *str_of(pid_t pid, uint64_t obj, const struct cmon_py_offsets *o,
		    uint32_t compact_size)
{
	unsigned char hdr[80];
	uint64_t len, state, utf8 = 0, utf8_len = 0;
	unsigned kind;
	char *s;

	if (!obj || procmem__read(pid, obj, hdr, sizeof(hdr)))
		return NULL;
	memcpy(&len, hdr + o->str_length, 8);
	state = hdr[o->str_state];
	if (len > 4096)
		return NULL;
	kind = (state >> 2) & 7;
	if ((state & 0x60) == 0x60) {
		s = malloc(len + 1);
		if (s && procmem__read(pid, obj + o->str_ascii_data, s, len)) {
			free(s);
			return NULL;
		}
		if (s)
			s[len] = 0;
		return s;
	}
	memcpy(&utf8, hdr + o->str_utf8, 8);
	memcpy(&utf8_len, hdr + o->str_utf8_length, 8);
	if (utf8 && utf8_len <= 4 * 4096) {
		s = malloc(utf8_len + 1);
		if (s && procmem__read(pid, utf8, s, utf8_len)) {
			free(s);
			return NULL;
		}
		if (s)
			s[utf8_len] = 0;
		return s;
	}
	if (!(state & 0x20) || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	return str_wide(pid, obj + compact_size, len, kind);
}

char *pyvalue__str(pid_t pid, uint64_t obj, const struct py_layout *l)
{
	return str_of(pid, obj, &l->bpf, l->size_compact_str);
}

int pyvalue__json_string(struct strbuf *sb, const char *s, size_t n)
{
	int err = strbuf__putc(sb, '"');

	for (size_t i = 0; i < n && !err; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			err = strbuf__printf(sb, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			err = strbuf__printf(sb, "\\u%04x", c);
		else
			err = strbuf__putc(sb, (char)c);
	}
	return err ? err : strbuf__putc(sb, '"');
}

/* Invalid UTF-8 would break JSON readers: bytes >= 0x80 of a bytes value
 * are written as \xXX, and a cut str keeps whole characters. */
static int json_bytes(struct strbuf *sb, const char *s, size_t n)
{
	int err = strbuf__puts(sb, "\"b'");

	for (size_t i = 0; i < n && !err; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			err = strbuf__printf(sb, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			err = strbuf__printf(sb, "\\\\x%02x", c);
		else
			err = strbuf__putc(sb, (char)c);
	}
	return err ? err : strbuf__puts(sb, "'\"");
}

static size_t utf8_cut(const char *s, size_t n)
{
	size_t i = n;

	/* back off a trailing partial sequence */
	while (i > 0 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i > 0 && (unsigned char)s[i - 1] >= 0xc0) {
		unsigned char lead = (unsigned char)s[i - 1];
		size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;

		if (n - (i - 1) < need)
			return i - 1;
	}
	return n;
}

static const char *type_name(struct pyvalue_ctx *vc, uint64_t type)
{
	uint64_t *slot;
	bool added;
	char buf[128] = "";

	slot = hmap__get(&vc->types, &type, sizeof(type), &added);
	if (!slot)
		return "object";
	if (added) {
		uint64_t at = procmem__ptr(vc->pid, type + vc->layout->bpf.type_name);

		if (!at || procmem__read(vc->pid, at, buf, sizeof(buf) - 1)) {
			/* a name near the end of a mapping: byte by byte */
			for (size_t i = 0; at && i < sizeof(buf) - 1 &&
					   !procmem__read(vc->pid, at + i, &buf[i], 1) && buf[i]; i++)
				;
		}
		buf[sizeof(buf) - 1] = 0;
		*slot = (uintptr_t)strdup(buf[0] ? buf : "object");
	}
	return *slot ? (const char *)(uintptr_t)*slot : "object";
}

void pyvalue__dict_each(pid_t pid, const struct cmon_py_offsets *o, uint64_t dict,
			pyvalue_dict_fn fn, void *ctx)
{
	uint64_t keys = procmem__ptr(pid, dict + o->dict_keys), n = 0;
	uint8_t hdr[3];

	if (!keys || procmem__ptr(pid, dict + o->dict_values) ||
	    procmem__read(pid, keys + 8, hdr, 3) || procmem__read(pid, keys + 24, &n, 8))
		return;
	/* dk_log2_size, dk_log2_index_bytes, dk_kind; the entries past the
	 * indices, {key, value} or {hash, key, value} */
	for (uint64_t e = 0, at = keys + 32 + (1ull << (hdr[1] & 31)); e < n && e < 4096; e++) {
		uint64_t ent[3];
		size_t sz = hdr[2] ? 16 : 24;

		if (procmem__read(pid, at + sz * e, ent, sz))
			return;
		if (ent[sz == 16 ? 0 : 1] && fn(ctx, ent[sz == 16 ? 0 : 1], ent[sz == 16 ? 1 : 2]))
			return;
	}
}

struct find_key {
	pid_t pid;
	const struct py_layout *l;
	const char *want;
	uint64_t found;
};

static bool find_key(void *ctx, uint64_t key, uint64_t value)
{
	struct find_key *f = ctx;
	char *s = pyvalue__str(f->pid, key, f->l);
	bool hit = s && !strcmp(s, f->want);

	free(s);
	if (hit)
		f->found = value;
	return hit;
}

static bool find_value(void *ctx, uint64_t key, uint64_t value)
{
	struct find_key *f = ctx;

	if (value != f->found)
		return false;
	f->found = key;
	f->want = NULL;
	return true;
}

/* An enum member's name: its class's _member_map_ {name: member} holds
 * it.  NULL when OBJ is not one. */
static const char *enum_name(struct pyvalue_ctx *vc, uint64_t type, uint64_t obj)
{
	const struct cmon_py_offsets *o = &vc->layout->bpf;
	uint64_t key[2] = { type, obj }, *slot, dict;
	struct find_key f = { .pid = vc->pid, .l = vc->layout, .want = "_member_map_" };
	bool added;
	char *name = NULL;

	slot = hmap__get(&vc->names, key, sizeof(key), &added);
	if (!slot)
		return NULL;
	if (added) {
		/* the class, then its bases (an IntEnum subclass's members) */
		for (int depth = 0; type && depth < 4 && !name; depth++) {
			dict = procmem__ptr(vc->pid, type + vc->layout->type_dict);
			f.found = 0;
			f.want = "_member_map_";
			if (dict)
				pyvalue__dict_each(vc->pid, o, dict, find_key, &f);
			if (f.found) {
				uint64_t map = f.found;

				f.found = obj;
				pyvalue__dict_each(vc->pid, o, map, find_value, &f);
				if (!f.want)
					name = pyvalue__str(vc->pid, f.found, vc->layout);
				break;
			}
			type = procmem__ptr(vc->pid, type + vc->layout->type_base);
		}
		*slot = (uintptr_t)(name ? name : strdup(""));
	}
	name = (char *)(uintptr_t)*slot;
	return name && name[0] ? name : NULL;
}

int pyvalue__render(struct pyvalue_ctx *vc, const struct cmon_py_val *v, struct strbuf *sb)
{
	char tmp[64];
	double d;
	size_t n = v->nbytes <= CMON_PY_STR_MAX ? v->nbytes : CMON_PY_STR_MAX;

	switch (v->kind) {
	case CMON_PYV_NONE:
		return strbuf__puts(sb, "null");
	case CMON_PYV_TRUE:
		return strbuf__puts(sb, "true");
	case CMON_PYV_FALSE:
		return strbuf__puts(sb, "false");
	case CMON_PYV_INT:
		return strbuf__printf(sb, "%lld", (long long)v->num);
	case CMON_PYV_BIGINT:
		/* beyond 64 bits: its sign and size ("<int -101 bits>": -2**100) */
		return strbuf__printf(sb, "\"<int %s%u bits>\"", v->num ? "-" : "", v->len);
	case CMON_PYV_FLOAT:
		memcpy(&d, &v->num, 8);
		if (d != d || d - d != 0) /* nan, inf: not JSON numbers */
			return strbuf__printf(sb, "\"%g\"", d);
		snprintf(tmp, sizeof(tmp), "%.17g", d);
		if (!strpbrk(tmp, ".eE"))
			strcat(tmp, ".0");
		return strbuf__puts(sb, tmp);
	case CMON_PYV_STR: {
		int err;

		n = utf8_cut(v->data, n);
		err = pyvalue__json_string(sb, v->data, n);
		if (!err && n < v->len) {
			sb->len--; /* cut: "..." inside the quotes */
			err = strbuf__puts(sb, "...\"");
		}
		return err;
	}
	case CMON_PYV_STR_WIDE:
		return strbuf__printf(sb, "\"<str len %u>\"", v->len);
	case CMON_PYV_BYTES:
		return json_bytes(sb, v->data, n);
	case CMON_PYV_TUPLE:
		return strbuf__printf(sb, "\"<tuple len %u>\"", v->len);
	case CMON_PYV_LIST:
		return strbuf__printf(sb, "\"<list len %u>\"", v->len);
	case CMON_PYV_DICT:
		return strbuf__printf(sb, "\"<dict len %u>\"", v->len);
	case CMON_PYV_INTSUB: {
		/* as Python shows an enum member: <HTTPStatus.NOT_FOUND: 404> */
		struct cmon_py_intsub is;
		const char *name, *tname;
		char val[40];

		memcpy(&is, v->data, sizeof(is));
		tname = type_name(vc, is.type);
		name = enum_name(vc, is.type, is.obj);
		if (v->nbytes == CMON_PY_INTSUB_BIG)
			snprintf(val, sizeof(val), "<int %s%u bits>", v->num ? "-" : "", v->len);
		else
			snprintf(val, sizeof(val), "%lld", (long long)v->num);
		return name ? strbuf__printf(sb, "\"<%s.%s: %s>\"", tname, name, val)
			    : strbuf__printf(sb, "\"<%s: %s>\"", tname, val);
	}
	case CMON_PYV_OTHER:
		if (n)
			return strbuf__printf(sb, "\"<%.*s>\"", (int)utf8_cut(v->data, n), v->data);
		return strbuf__printf(sb, "\"<%s>\"", type_name(vc, v->num));
	case CMON_PYV_UNREADABLE:
		return strbuf__puts(sb, "\"<unreadable>\"");
	default:
		return strbuf__puts(sb, "null");
	}
}

int pyvalue__render_exception(struct pyvalue_ctx *vc, const char *type,
			      const struct cmon_py_val *msg, struct strbuf *sb)
{
	struct strbuf m = { 0 };
	int err = strbuf__puts(sb, "{\"type\":");

	err = err ? err : pyvalue__json_string(sb, type, strlen(type));
	err = err ? err : strbuf__puts(sb, ",\"message\":");
	if (!err && msg->kind == CMON_PYV_ABSENT) {
		err = pyvalue__json_string(sb, "", 0);
	} else if (!err && msg->kind == CMON_PYV_STR) {
		err = pyvalue__render(vc, msg, sb);
	} else if (!err) {
		/* str(args[0]): its JSON text, as a string */
		err = pyvalue__render(vc, msg, &m);
		if (!err && m.len >= 2 && m.buf[0] == '"')
			err = strbuf__putn(sb, m.buf, m.len);
		else if (!err)
			err = pyvalue__json_string(sb, m.buf, m.len);
	}
	strbuf__release(&m);
	return err ? err : strbuf__putc(sb, '}');
}
