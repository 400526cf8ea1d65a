// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * csv.c: RFC 4180 rows.  Lines end in CRLF as the RFC says (pandas, Python's
 * csv module and spreadsheets all read it).  Strings are passed through byte
 * for byte, quoted when they hold , " CR or LF or start or end with a space
 * (which some readers would trim); a quote inside is doubled.
 */
#include <errno.h>
#include "writer_impl.h"

#define CSV_HEADER \
	"ts_ns,pid,tid,comm,func,depth,arg0,arg1,arg2,arg3,arg4,arg5,ret," \
	"latency_ns,latency_lt_ns,rss_entry,rss_exit,vms_entry,vms_exit,status,module"

int writer__csv_header(struct strbuf *sb)
{
	int err = strbuf__reserve(sb, sizeof(CSV_HEADER));

	if (err)
		return err;
	memcpy(sb->buf + sb->len, CSV_HEADER, sizeof(CSV_HEADER) - 1);
	sb->len += sizeof(CSV_HEADER) - 1;
	return 0;
}

int writer__csv_row(struct strbuf *sb, const struct call_record *rec)
{
	const char *comm = wr_str(rec->comm), *func = wr_str(rec->func);
	const char *mod = wr_str(rec->module);
	const char *status = call_status__name(rec->status);
	size_t lc = strlen(comm), lf = strlen(func), lm = strlen(mod);
	bool has_exit = wr_has_exit(rec), has_args = wr_has_args(rec);
	char *p;
	int err;

	/* 17 numbers, 20 commas, status (<= 8), CRLF, and the strings. */
	err = strbuf__reserve(sb, 17 * DECIMAL_MAX + 20 + 8 + 2 + WR_CSV_MAX(lc) +
			      WR_CSV_MAX(lf) + WR_CSV_MAX(lm));
	if (err)
		return err;
	p = sb->buf + sb->len;
	p = decimal__u64(p, rec->ts_ns);
	*p++ = ',';
	p = decimal__u64(p, rec->pid);
	*p++ = ',';
	p = decimal__u64(p, rec->tid);
	*p++ = ',';
	p = writer__csv_put(p, comm, lc);
	*p++ = ',';
	p = writer__csv_put(p, func, lf);
	*p++ = ',';
	if (rec->depth >= 0)
		p = decimal__u64(p, (uint64_t)rec->depth);
	*p++ = ',';
	for (int i = 0; i < 6; i++) {
		if (has_args)
			p = wr_arg_decimal(p, rec, i);
		*p++ = ',';
	}
	if (call_record__has_ret(rec))
		p = decimal__i64(p, rec->ret);
	*p++ = ',';
	if (has_exit)
		p = decimal__u64(p, rec->latency_ns);
	*p++ = ',';
	if (has_exit && rec->latency_lt_ns)
		p = decimal__u64(p, rec->latency_lt_ns);
	*p++ = ',';
	p = decimal__u64(p, rec->rss_entry);
	*p++ = ',';
	if (has_exit)
		p = decimal__u64(p, rec->rss_exit);
	*p++ = ',';
	p = decimal__u64(p, rec->vms_entry);
	*p++ = ',';
	if (has_exit)
		p = decimal__u64(p, rec->vms_exit);
	*p++ = ',';
	p = wr_mem(p, status, strlen(status));
	*p++ = ',';
	p = writer__csv_put(p, mod, lm);
	/* No line end: typed columns may follow; the writer ends the row. */
	sb->len = (size_t)(p - sb->buf);
	return 0;
}
