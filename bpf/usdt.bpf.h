/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * usdt.bpf.h: a USDT site's arguments, as its note spells them (register,
 * memory at register + offset, or a constant; a width and a sign), shared
 * by trace (records) and profile (argument histograms).
 */
#ifndef CMON_USDT_BPF_H
#define CMON_USDT_BPF_H

#include "cmon_abi.h"
#include "regs.bpf.h"

/* USDT sites: their argument specs, by func_id (sized by user space). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cmon_usdt_spec);
} usdt_specs SEC(".maps");

static __always_inline __u64 usdt_arg(struct pt_regs *ctx, const struct cmon_usdt_arg *a)
{
	__u64 v = 0, reg;
	__u32 shift;

	if (a->kind == CMON_USDT_CONST) {
		/* gcc writes an unsigned constant as a signed immediate
		 * (1@$-6 for 250): the width and sign below say which */
		v = (__u64)a->value;
	} else {
		reg = regs_at(ctx, a->reg_off);
		if (a->kind == CMON_USDT_MEM) {
			__u32 n = a->size;

			if (n > 8)
				n = 8;
			if (n == 0)
				n = 1;
			if (bpf_probe_read_user(&v, n, (void *)(reg + a->value)))
				v = 0;
		} else {
			v = reg;
		}
	}
	/* The argument's own width and sign: -1 in a 4-byte int is -1. */
	shift = a->size >= 1 && a->size < 8 ? 64 - 8 * a->size : 0;
	if (shift)
		v = a->is_signed ? (__u64)((__s64)(v << shift) >> shift) : (v << shift) >> shift;
	return v;
}

#endif
