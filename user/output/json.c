// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * json.c: JSON Lines, one object per record, keys in CSV column order.
 * Strings: " and \ escaped, the short escapes for \b \f \n \r \t, other
 * control characters and DEL as \u00xx; valid UTF-8 passes through; any
 * byte that is not part of a valid UTF-8 sequence becomes \u00xx of its
 * value (read as Latin-1), so every line is valid JSON whatever the traced
 * program put in its names.
 */
#include <errno.h>
#include "schema.h"
#include "writer_impl.h"

int writer__json_row(struct strbuf *sb, const struct call_record *rec)
{
	const char *comm = wr_str(rec->comm), *func = wr_str(rec->func);
	const char *mod = wr_str(rec->module);
	const char *status = call_status__name(rec->status);
	size_t lc = strlen(comm), lf = strlen(func), lm = strlen(mod);
	bool has_exit = wr_has_exit(rec), has_args = wr_has_args(rec) && !rec->no_regs;
	char *p;
	int err;

	/* Keys and punctuation are < 256 bytes; 16 numbers; status. */
	err = strbuf__reserve(sb, 256 + 17 + 17 * DECIMAL_MAX + 10 + WR_JSON_MAX(lc) +
			      WR_JSON_MAX(lf) + WR_JSON_MAX(lm));
	if (err)
		return err;
	p = sb->buf + sb->len;
	p = WR_LIT(p, "{\"schema\":" CMON_SCHEMA_TEXT ",\"ts_ns\":");
	p = decimal__u64(p, rec->ts_ns);
	p = WR_LIT(p, ",\"pid\":");
	p = decimal__u64(p, rec->pid);
	p = WR_LIT(p, ",\"tid\":");
	p = decimal__u64(p, rec->tid);
	p = WR_LIT(p, ",\"comm\":");
	p = writer__json_put(p, comm, lc);
	p = WR_LIT(p, ",\"func\":");
	p = writer__json_put(p, func, lf);
	p = WR_LIT(p, ",\"depth\":");
	if (rec->depth >= 0)
		p = decimal__u64(p, (uint64_t)rec->depth);
	else
		p = WR_LIT(p, "null");
	for (int i = 0; i < 6; i++) {
		static const char key[6][9] = { ",\"arg0\":", ",\"arg1\":", ",\"arg2\":",
						",\"arg3\":", ",\"arg4\":", ",\"arg5\":" };

		p = wr_mem(p, key[i], 8);
		if (has_args)
			p = wr_arg_decimal(p, rec, i);
		else
			p = WR_LIT(p, "null");
	}
	p = WR_LIT(p, ",\"ret\":");
	if (call_record__has_ret(rec) && !rec->no_regs)
		p = decimal__i64(p, rec->ret);
	else
		p = WR_LIT(p, "null");
	p = WR_LIT(p, ",\"latency_ns\":");
	if (has_exit)
		p = decimal__u64(p, rec->latency_ns);
	else
		p = WR_LIT(p, "null");
	/* a number when latency_ns is not a measurement (README: latencies) */
	p = WR_LIT(p, ",\"latency_lt_ns\":");
	if (has_exit && rec->latency_lt_ns)
		p = decimal__u64(p, rec->latency_lt_ns);
	else
		p = WR_LIT(p, "null");
	p = WR_LIT(p, ",\"rss_entry\":");
	p = decimal__u64(p, rec->rss_entry);
	p = WR_LIT(p, ",\"rss_exit\":");
	if (has_exit)
		p = decimal__u64(p, rec->rss_exit);
	else
		p = WR_LIT(p, "null");
	p = WR_LIT(p, ",\"vms_entry\":");
	p = decimal__u64(p, rec->vms_entry);
	p = WR_LIT(p, ",\"vms_exit\":");
	if (has_exit)
		p = decimal__u64(p, rec->vms_exit);
	else
		p = WR_LIT(p, "null");
	p = WR_LIT(p, ",\"status\":\"");
	p = wr_mem(p, status, strlen(status));
	p = WR_LIT(p, "\",\"module\":");
	p = writer__json_put(p, mod, lm);
	/* Open: typed keys and the stack may follow; the writer closes it. */
	sb->len = (size_t)(p - sb->buf);
	/* a duty-cycled probe's record stands for 1/sampled calls */
	if (rec->sampled > 0 && rec->sampled < 1)
		return strbuf__printf(sb, ",\"sampled\":%.4f", rec->sampled);
	return 0;
}
