// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* store_npy.c: .npy format 1.0 headers (numpy/lib/format.py). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <cmon/cmon.h>
#include "store/store_npy.h"

int store_npy__header(const char *dtype, unsigned ndim, const uint64_t *shape, char *buf,
		      size_t cap)
{
	char dict[65536], descr[32];
	const char *body;
	size_t len = 0, total;
	int k;

	if (!cmon_dtype_numeric(dtype) || strlen(dtype) > 24)
		return -EINVAL;
	body = dtype;
	if (*body == '<' || *body == '>' || *body == '|' || *body == '=')
		body++;
	if (cmon_dtype_size(dtype) == 1)
		snprintf(descr, sizeof(descr), "|%s", body);
	else if (dtype[0] == '>')
		snprintf(descr, sizeof(descr), ">%s", body);
	else
		snprintf(descr, sizeof(descr), "<%s", body);

	k = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (",
		     descr);
	len = (size_t)k;
	for (unsigned i = 0; i < ndim; i++) {
		k = snprintf(dict + len, sizeof(dict) - len, "%s%" PRIu64, i ? ", " : "", shape[i]);
		if (k < 0 || (size_t)k >= sizeof(dict) - len)
			return -E2BIG;
		len += (size_t)k;
	}
	k = snprintf(dict + len, sizeof(dict) - len, "%s), }", ndim == 1 ? "," : "");
	if (k < 0 || (size_t)k >= sizeof(dict) - len)
		return -E2BIG;
	len += (size_t)k;
	/* magic(6) + version(2) + length(2) + dict + padding + '\n' */
	total = 10 + len + 1;
	total = (total + 63) / 64 * 64;
	if (total - 10 > 65535)
		return -E2BIG;
	if (total > cap)
		return -ENOSPC;
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)((total - 10) & 0xff);
	buf[9] = (char)((total - 10) >> 8);
	memcpy(buf + 10, dict, len);
	memset(buf + 10 + len, ' ', total - 10 - len - 1);
	buf[total - 1] = '\n';
	return (int)total;
}
