/*
 * store_sink.h: the capture store (store/store_writer.h) as a sink of the
 * router (output/sink.h): `cmon capture`'s calls with their typed values
 * and captured buffers.  A store holds the files and functions of the
 * probe set (a Python function is added at its first call) and what makes
 * it trustworthy later (command line, target, build-id).
 */
#ifndef CMON_EVENT_STORE_SINK_H
#define CMON_EVENT_STORE_SINK_H

#include <stdbool.h>
#include <sys/types.h>
#include "output/sink.h"

struct probe_set;
struct typer;

struct store_sink_opts {
	const struct probe_set *set;
	const struct typer *typer;  /* the signatures, which functions are typed */
	const char *command_line;   /* cmon's own, one string */
	const char *target_path;    /* the traced executable */
	const char *build_id_path;  /* the file whose build-id names the build */
	bool quiet;                 /* no "capturing to" line */
};

/* An out_sink_open_fn (CTX: struct store_sink_opts, which must outlive
 * the sink): a new store in OUTDIR.  0 or -errno after one error line. */
int store_sink__open(void *ctx, pid_t pid, uint32_t func_id, const char *outdir,
		     struct out_sink **out);

#endif
