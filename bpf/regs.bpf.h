/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * regs.bpf.h: a register of the probed thread at a struct pt_regs offset
 * user space computed (the verifier allows only constant offsets into the
 * context, so the word is read through the kernel's copy).  Shared by USDT
 * arguments and indirect-jump exits.
 */
#ifndef CMON_REGS_BPF_H
#define CMON_REGS_BPF_H

static __always_inline __u64 regs_at(struct pt_regs *ctx, __u32 off)
{
	__u64 v = 0;

	if (off > sizeof(struct pt_regs) - 8)
		return 0;
	bpf_probe_read_kernel(&v, sizeof(v), (void *)ctx + (off & 0xff8));
	return v;
}

#endif
