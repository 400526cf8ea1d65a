/*
 * router.h: where a trace's records go.  One output (a stream cmon was
 * given: stdout, -o FILE, -o unix:PATH; or a capture store), or one per
 * process from an -o template (outpath.h), made at the process's first
 * record.  Each output is a sink (sink.h) with its ledger (ledger.h): what
 * reached it is counted once a flush that carries it succeeds.
 */
#ifndef CMON_OUTPUT_ROUTER_H
#define CMON_OUTPUT_ROUTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "output/record.h"
#include "output/sink.h"

struct out_router;

struct out_router_opts {
	size_t n_funcs;          /* for the per-function counts */
	const char *const *func_names; /* [n_funcs] for -o %f; NULL: none */
	out_sink_open_fn *open;  /* per process: makes each process's sink */
	void *open_ctx;
};

/* Everything to SINK, which the router frees (also when it returns NULL:
 * out of memory). */
struct out_router *out_router__single(struct out_sink *sink, const struct out_router_opts *o);
/* One sink per process and/or function, named by TEMPLATE (checked by
 * out_path__check). */
struct out_router *out_router__per_process(const char *tmpl, const struct out_router_opts *o);

/* Read process PID's rank now (-p PIDs, a launched program): a process may
 * be gone when its first record is drained.  Others are read then. */
void out_router__note_process(struct out_router *r, pid_t pid);

/* REC of function FUNC_ID to its output.  0, or -errno when that output
 * failed (the record is counted as not written). */
int out_router__write(struct out_router *r, const struct call_record *rec, uint32_t func_id);

/* A record drained after the trace stopped on an output error. */
void out_router__refuse(struct out_router *r);

/* Flush every output and settle the ledgers (after each drain; FINAL at
 * the end, after the views wrote what they held).  0 or the first error. */
int out_router__settle(struct out_router *r, bool final);

uint64_t out_router__written(const struct out_router *r);
uint64_t out_router__unwritten(const struct out_router *r);
/* Of the unwritten: dropped by an output that went on (a full buffer). */
uint64_t out_router__dropped(const struct out_router *r);
uint64_t out_router__written_func(const struct out_router *r, size_t func_id);
size_t out_router__files(const struct out_router *r); /* per-process files made */

void out_router__free(struct out_router *r); /* frees its sinks */

#endif
