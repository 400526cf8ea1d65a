/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * calib_slots.h: what calib.bpf.c and user/probe/calib.c share.  A slot is one
 * (entry site class, return mechanism) pair: slot = class * 2 + (ret-insn).
 */
#ifndef CMON_CALIB_H
#define CMON_CALIB_H

#define CMON_CALIB_CLASSES 3   /* enum probe_cost: optimized, emulated, single-step */
#define CMON_CALIB_SLOTS (CMON_CALIB_CLASSES * 2)
#define CMON_CALIB_SAMPLES 64 /* calls timed per slot and round (at most) */

#endif
