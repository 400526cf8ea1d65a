/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * break.bpf.h: `cmon break`'s settings and counts, shared by the C entry
 * probe (break_hit, trace.bpf.c) and Python's (py_break_hit, python.bpf.h).
 */
#ifndef CMON_BREAK_BPF_H
#define CMON_BREAK_BPF_H

const volatile __u32 targ_break_count = 0;   /* cmon break: stop at the first N hits */

/*
 * cmon break: hits of the break functions so far (all processes), and
 * those whose record did not fit (the process was then not stopped).
 */
__u64 break_hits = 0;
__u64 break_lost = 0;

#endif
