/*
 * pycode.h: Python code objects as cmon knows them (their qualified name,
 * file, first line and parameter names), which --py patterns select them,
 * and the rows the kernel matches a code object met first by.
 *
 * A pattern is a glob on the qualified name (`fib`, `Shape.*`), or
 * MODULE.GLOB with MODULE any dotted tail of the file's path without
 * ".py" (`handlers.f`, `app.handlers.*` for .../app/handlers.py; MODULE is
 * taken literally), or FILE:GLOB with FILE the path, a path suffix after a
 * '/' or the basename.
 */
#ifndef CMON_PYCODE_H
#define CMON_PYCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cmon_abi.h"
#include "python/pylayout.h"

struct py_code {
	char *qualname, *filename;
	int firstlineno;
	int argcount, posonly, kwonly, flags;
	unsigned n_names;               /* parameters: argcount + kwonly + *args + **kw */
	char *names[CMON_PY_ALL_ARGS];  /* "*args", "**kw" with their stars */
	bool traced;
};

/* Does PATTERN select function QUALNAME of FILENAME? */
bool pycode__matches(const char *pattern, const char *qualname, const char *filename);

/* The code object described by REC (the kernel's announcement; names it
 * could not read are read from process PID), or read from PID's memory at
 * CODE (REC NULL).  NULL with errno. */
struct py_code *pycode__new(pid_t pid, uint64_t code, const struct cmon_py_code_rec *rec,
			    const struct py_layout *l);
void pycode__free(struct py_code *c);

/* C is a generator, coroutine or async generator (its calls make one). */
bool pycode__is_generator(const struct py_code *c);

/*
 * The rows of PATTERNS (N of them) for the kernel (cmon_abi.h): 0 with
 * *ROWS (malloc'd) and *N_ROWS.  A form the rows cannot hold (a [set], a
 * name too long, too many forms) is a CMON_PY_PAT_USER row, or with
 * STRICT (cmon break, which never stops a call it cannot decide at once)
 * -EINVAL after one error line.
 */
int pycode__rows(const char *const *patterns, size_t n, bool strict, struct cmon_py_pat **rows,
		 unsigned *n_rows);

#endif
