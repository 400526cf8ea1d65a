// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* store_cli.c: helpers of the store-reading subcommands. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli/commands.h"
#include "cli/store_cli.h"
#include "core/log.h"

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
		size_t tl = strlen(p->type);

		/* "char *buf", not "char * buf" */
		if (tl)
			fprintf(m, "%s%s%s%s", i ? ", " : "", p->type,
				p->type[tl - 1] == '*' ? "" : " ", p->name);
		else
			fprintf(m, "%s%s", i ? ", " : "", p->name);
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
