/*
 * store_cli.h: what `cmon ls`, `cmon show` and `cmon export` share: opening
 * a store with a one-line error, and formatting times, sizes, signatures
 * and untrusted names for a terminal.
 */
#ifndef CMON_STORE_CLI_H
#define CMON_STORE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmon/cmon.h>

/* Open PATH; on failure print one error line and return CMON_EXIT_ERROR. */
int store_cli__open(const char *path, struct cmon_store **s);

/* "2024-05-01 12:00:00.123456789 +0200" (local time) of CLOCK_REALTIME ns. */
void store_cli__time(uint64_t ns, char *buf, size_t cap);

/* "1234567 (1.2 MiB)"-style: bytes as a short human figure. */
void store_cli__bytes(uint64_t v, char *buf, size_t cap);

/* Print S with control characters (and DEL) shown as '?'. */
void store_cli__put_safe(FILE *f, const char *s);

/* "int parse_request(const char *buf, size_t len)"; malloc'ed, NULL on ENOMEM. */
char *store_cli__signature(const struct cmon_function *f);

/* The name to look function I of FS[N] up by: MODULE:NAME when its name
 * alone is not unique in the store.  malloc'ed; NULL on ENOMEM. */
char *store_cli__lookup_name(const struct cmon_function *fs, size_t n, size_t i);

/* How a blob reads: "str" (text: |S1), "array" (numbers: a numeric dtype
 * other than |u1), or "bytes" (|u1 and anything else).  KIND, the capture's
 * own kind from the signature (NULL or "": none), wins when given. */
const char *store_cli__blob_kind(const struct cmon_blob *b, const char *kind);

/* Blob B read as KIND (store_cli__blob_kind) as JSON text appended to OUT:
 * a string, an array of numbers by dtype ("[1, -2, 3]"; nested by shape,
 * "[[1, 2], [3, 4]]", when all of it is there), or a hex string.
 * MAX > 0 keeps the first MAX elements (bytes, characters) and sets *CUT
 * when more were left out.  0 or -ENOMEM. */
struct strbuf;
int store_cli__blob_json(const struct cmon_blob *b, const char *kind, size_t max,
			 struct strbuf *out, bool *cut);

/* A call's notes (cmon_call.notes_json; NULL: none) as two JSON arrays of
 * value paths: TRUNCATED (a string or buffer cut at --strlen/--capture-max)
 * and FAULTS (a pointer that could not be read: its value reads null).
 * Each is reset, and left empty (len 0) when the call has none of it; else
 * it holds '["s","p->name"]'.  0, -EINVAL when the notes are not an object
 * of such lists (a corrupted store), or -ENOMEM. */
int store_cli__notes(const char *notes_json, struct strbuf *truncated, struct strbuf *faults);

/* The capture of F named NAME, or NULL. */
const struct cmon_capture_info *store_cli__capture(const struct cmon_function *f,
						   const char *name);

/* Parse a decimal uint64 (the whole string); 0 or -EINVAL. */
int store_cli__parse_u64(const char *s, uint64_t *v);

#endif
