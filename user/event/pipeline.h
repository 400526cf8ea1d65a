/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pipeline.h: user space's half of the event path, the one way every
 * command that reads records has it (trace, capture, break, profile --py,
 * the agent's log and Python probes): the tracer (ring buffer, staging,
 * spool), the decoder, and Python's code objects named and its calls
 * decoded, wired once; the command gives what it does with a call.
 *
 *	pipeline__new      load the programs (tracer__new), the decoder
 *	pipeline__attach   the probes, then Python's hooks
 *	pipeline__poll     in the command's loop: records to its ops
 *	pipeline__stop     no call starts or ends past it; what is recorded
 *	                   is handed on
 *	pipeline__finish   the calls still open in the processes, as never
 *	                   returned; the last records
 *	pipeline__free
 */
#ifndef CMON_PIPELINE_H
#define CMON_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "event/decode.h"
#include "event/tracer.h"

struct pipeline;
struct pytrace;

/* What a command does with the records; NULL: not asked for.  A nonzero
 * value stops the poll (the record is used up), as tracer.h says. */
struct pipeline_ops {
	/* A C call: RAW is cmon's copy; CR its decoding (decode.h), NULL
	 * when it did not decode. */
	int (*call)(void *ctx, const struct cmon_call_rec *raw, struct call_record *cr);
	int (*capture)(void *ctx, const struct cmon_capture_rec *rec, size_t size);
	int (*stack)(void *ctx, const struct cmon_stack_rec *rec);
	/* A Python call (its code object named by then): N is
	 * pytrace__decode's value, CR set when N > 0. */
	int (*py_call)(void *ctx, const struct cmon_py_rec *raw, struct call_record *cr, int n);
	void *ctx;
};

struct pipeline_opts {
	/* The tracer's settings; its callbacks and context are the
	 * pipeline's own (whatever they hold here is replaced). */
	struct tracer_opts tracer;
	/* Decode C calls (latencies less the probe's own cost, CALIB);
	 * false: CR is always NULL (the agent's Python probes, profile --py). */
	bool decode;
	const struct probe_calib *calib;
	/* --py: records of PY's processes (started at attach, restored at
	 * stop; the caller owns it).  NULL: none. */
	struct pytrace *py;
	struct pipeline_ops ops;
};

/* NULL and errno (after one error line, as tracer__new). */
struct pipeline *pipeline__new(const struct probe_set *set, const struct pipeline_opts *o);
int pipeline__attach(struct pipeline *p);
/* A poll (tracer__poll), then Python's hooks set where they are due. */
int pipeline__poll(struct pipeline *p, int timeout_ms);
/* Records in hand, to the ops (tracer__drain): the agent, while attached. */
int pipeline__drain(struct pipeline *p);
/* Python's hooks restored, the probes detached, what they recorded
 * handed on. */
void pipeline__stop(struct pipeline *p);
/* After stop: the calls still open in the threads of ROOTS (and, with
 * CHILDREN, of the followed processes that are not roots) handed on as
 * never returned; the lifecycle links detached, the last records. */
void pipeline__finish(struct pipeline *p, const pid_t *roots, size_t n_roots, bool children);
void pipeline__free(struct pipeline *p); /* NULL fine */

/* Tests only (CMON_TEST_PY_LATE_CHILDREN, read by main): the first --py
 * record of each forked child waits until the child is gone, so that its
 * records are read after it, as a consumer far behind would read them. */
void pipeline__test_py_late_children(void);

struct tracer *pipeline__tracer(const struct pipeline *p);
const struct decoder *pipeline__decoder(const struct pipeline *p);

#endif
