/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * args.bpf.h: a call's integer arguments at its entry, as trace and
 * profile record them (arg0..arg5): the SysV registers, or Go's under its
 * register ABI (CMON_COOKIE_GO).
 */
#ifndef CMON_ARGS_BPF_H
#define CMON_ARGS_BPF_H

/* The integer arguments: the C ABI's registers, or Go's (ABIInternal). */
#define PICK_REG(c_reg, go_reg, mask)                                            \
	({                                                                       \
		__u64 __c = ctx->c_reg, __g = ctx->go_reg;                       \
		barrier_var(__c);                                                \
		barrier_var(__g);                                                \
		(__g & (mask)) | (__c & ~(mask));                                \
	})

/* Branch-free, as entry_slot: a computed context offset is refused. */
static __always_inline void read_args(struct pt_regs *ctx, bool go, __u64 *args)
{
	__u64 mask = -(__u64)go;

	args[0] = PICK_REG(di, ax, mask);
	args[1] = PICK_REG(si, bx, mask);
	args[2] = PICK_REG(dx, cx, mask);
	args[3] = PICK_REG(cx, di, mask);
	args[4] = PICK_REG(r8, si, mask);
	args[5] = PICK_REG(r9, r8, mask);
}

#endif
