// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* store_cli.c: helpers of the store-reading subcommands. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli/commands.h"
#include "cli/store_cli.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "dwarf/ctype.h"
#include "output/render.h"
#include "output/writer.h"

int store_cli__open(const char *path, struct cmon_store **s)
{
	char msg[1100];
	int err = cmon_store_open_ex(path, 0, s, msg, sizeof(msg));

	if (err) {
		log_error("%s", msg[0] ? msg : cmon_strerror(err));
		return CMON_EXIT_ERROR;
	}
	return CMON_EXIT_OK;
}

void store_cli__time(uint64_t ns, char *buf, size_t cap)
{
	time_t sec = (time_t)(ns / 1000000000ull);
	char day[40], zone[8];
	struct tm tm;

	if (!localtime_r(&sec, &tm)) {
		snprintf(buf, cap, "%" PRIu64 " ns", ns);
		return;
	}
	strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm);
	strftime(zone, sizeof(zone), "%z", &tm);
	snprintf(buf, cap, "%s.%09u %s", day, (unsigned)(ns % 1000000000ull), zone);
}

void store_cli__bytes(uint64_t v, char *buf, size_t cap)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	int u = -1;

	while (d >= 1024.0 && u < 3) {
		d /= 1024.0;
		u++;
	}
	if (u < 0)
		snprintf(buf, cap, "%" PRIu64 " B", v);
	else
		snprintf(buf, cap, "%.1f %s", d, units[u]);
}

void store_cli__put_safe(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
		fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
}

char *store_cli__signature(const struct cmon_function *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	size_t nl = strlen(f->name);

	/* A demangled C++ name carries its parameter types: "ns::f(int, int)".
	 * With names to show, drop that list (the balanced (...) at the end). */
	if (f->n_params && nl && f->name[nl - 1] == ')') {
		int depth = 0;

		for (size_t i = nl; i-- > 0;) {
			depth += f->name[i] == ')' ? 1 : f->name[i] == '(' ? -1 : 0;
			if (!depth) {
				nl = i;
				break;
			}
		}
	}
	if (*f->ret_type)
		fprintf(m, "%s ", f->ret_type);
	fprintf(m, "%.*s(", (int)nl, f->name);
	for (size_t i = 0; i < f->n_params; i++) {
		const struct cmon_param *p = &f->params[i];
		/* valid C: "char *buf", "const double (*mat)[2]", "int v[4]" */
		char *decl = *p->type ? ctype__declare(p->type, p->name) : NULL;

		fprintf(m, "%s%s", i ? ", " : "", decl ? decl : p->name);
		free(decl);
	}
	fputc(')', m);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int store_cli__parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

char *store_cli__lookup_name(const struct cmon_function *fs, size_t n, size_t i)
{
	char *s = NULL;

	for (size_t j = 0; j < n; j++)
		if (j != i && !strcmp(fs[j].name, fs[i].name))
			return asprintf(&s, "%s:%s", fs[i].module, fs[i].name) < 0 ? NULL : s;
	return strdup(fs[i].name);
}

const char *store_cli__blob_kind(const struct cmon_blob *b, const char *kind)
{
	if (kind && (!strcmp(kind, "str") || !strcmp(kind, "array") || !strcmp(kind, "bytes")))
		return kind;
	if (!strcmp(b->dtype, "|S1"))
		return "str";
	if (strcmp(b->dtype, "|u1") && cmon_dtype_numeric(b->dtype))
		return "array";
	return "bytes";
}

/* One element of a little-endian numeric dtype as JSON; false when the
 * dtype is not one read here (complex, half, long double). */
static bool element_json(const char *dtype, const unsigned char *p, struct strbuf *out, int *err)
{
	char kind = dtype[1], buf[RENDER_NUM_LEN];
	size_t size = cmon_dtype_size(dtype);
	uint64_t u = 0;

	if (dtype[0] != '<' && dtype[0] != '|')
		return false;
	if (kind == 'f' && size == 8) {
		double d;

		memcpy(&d, p, 8);
		render__double_json(d, buf);
	} else if (kind == 'f' && size == 4) {
		float f;

		memcpy(&f, p, 4);
		render__float_json(f, buf);
	} else if ((kind == 'i' || kind == 'u' || kind == 'b') && size >= 1 && size <= 8 &&
		   !(size & (size - 1))) {
		memcpy(&u, p, size); /* x86-64: little-endian */
		if (kind == 'b')
			snprintf(buf, sizeof(buf), "%s", u ? "true" : "false");
		else if (kind == 'u')
			snprintf(buf, sizeof(buf), "%" PRIu64, u);
		else if (size < 8 && (u >> (size * 8 - 1)) & 1)
			snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)(u | ~0ull << (size * 8)));
		else
			snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)u);
	} else {
		return false;
	}
	*err = strbuf__puts(out, buf);
	return true;
}

int store_cli__blob_json(const struct cmon_blob *b, const char *kind, size_t max,
			 struct strbuf *out, bool *cut)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *d = b->data;
	size_t item = cmon_dtype_size(b->dtype), n, start = out->len;
	uint64_t stride[8];
	bool nest;
	int err = 0;

	kind = store_cli__blob_kind(b, kind);
	*cut = false;
	if (!strcmp(kind, "array") && item) {
		n = b->len / item;
		if (max && n > max) {
			n = max;
			*cut = true;
		}
		/* Nested by shape ([[1, 2], [3, 4]]) when all of it is there. */
		nest = b->ndim > 1 && b->ndim <= 8 && !*cut && !b->truncated;
		for (unsigned k = b->ndim; nest && k-- > 1;) {
			stride[k] = (k + 1 < b->ndim ? stride[k + 1] : 1) * b->shape[k];
			nest = b->shape[k] && stride[k] <= n;
		}
		if (nest && stride[1] * b->shape[0] != n)
			nest = false;
		err = strbuf__putc(out, '[');
		for (size_t i = 0; i < n && !err; i++) {
			if (i)
				err = strbuf__puts(out, ", ");
			for (unsigned k = 1; nest && k < b->ndim && !err; k++)
				if (i % stride[k] == 0)
					err = strbuf__putc(out, '[');
			if (!err && !element_json(b->dtype, d + i * item, out, &err))
				goto bytes; /* a dtype not read here: its bytes */
			for (unsigned k = 1; nest && k < b->ndim && !err; k++)
				if ((i + 1) % stride[k] == 0)
					err = strbuf__putc(out, ']');
		}
		return err ?: strbuf__putc(out, ']');
	}
	if (!strcmp(kind, "str")) {
		char *s;

		n = max && b->len > max ? max : b->len;
		*cut = n < b->len;
		/* up to the first NUL, as C reads it */
		s = strndup((const char *)d, n);
		if (!s)
			return -ENOMEM;
		err = json_escape(out, s);
		free(s);
		return err;
	}
bytes:
	if (out->buf) { /* from an array in a dtype not read here: restart */
		out->len = start;
		out->buf[start] = '\0';
	}
	n = max && b->len > max ? max : b->len;
	*cut = n < b->len;
	err = strbuf__putc(out, '"');
	for (size_t i = 0; i < n && !err; i++) {
		char two[2] = { hex[d[i] >> 4], hex[d[i] & 15] };

		err = strbuf__putn(out, two, 2);
	}
	return err ?: strbuf__putc(out, '"');
}

int store_cli__notes(const char *notes_json, struct strbuf *truncated, struct strbuf *faults)
{
	static const char *const keys[2] = { "truncated", "faults" };
	struct strbuf *outs[2] = { truncated, faults };
	json_t *j;
	int err = 0;

	strbuf__reset(truncated);
	strbuf__reset(faults);
	if (!notes_json)
		return 0;
	j = json_loads(notes_json, 0, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		return -EINVAL;
	}
	for (size_t k = 0; k < 2 && !err; k++) {
		json_t *a = json_object_get(j, keys[k]), *v;
		size_t i;

		if (!a)
			continue;
		if (!json_is_array(a)) {
			err = -EINVAL;
			break;
		}
		json_array_foreach(a, i, v) {
			if (!json_is_string(v) ||
			    json_string_length(v) != strlen(json_string_value(v))) {
				err = -EINVAL;
				break;
			}
			err = strbuf__puts(outs[k], i ? "," : "[");
			if (!err)
				err = json_escape(outs[k], json_string_value(v));
			if (err)
				break;
		}
		if (!err && json_array_size(a))
			err = strbuf__putc(outs[k], ']');
	}
	json_decref(j);
	if (err) {
		strbuf__reset(truncated);
		strbuf__reset(faults);
	}
	return err;
}

const struct cmon_capture_info *store_cli__capture(const struct cmon_function *f,
						   const char *name)
{
	for (size_t i = 0; i < f->n_captures; i++)
		if (!strcmp(f->captures[i].name, name))
			return &f->captures[i];
	return NULL;
}
