/*
 * yaml_limits.h: refuse YAML (and JSON) nested too deep before libyaml
 * builds a document of it.  libyaml's scanner does work proportional to the
 * nesting depth for every token, so 100,000 '[' take ~10 s of CPU (with the
 * agent's signals blocked meanwhile); one pass of events that stops at
 * MAX_DEPTH bounds it to microseconds.
 */
#ifndef CMON_AGENT_YAML_LIMITS_H
#define CMON_AGENT_YAML_LIMITS_H

#include <stddef.h>

#define YAML_MAX_DEPTH 64 /* a spec needs 4; a status document 3 */

/* 0 when TEXT (LEN bytes) nests at most MAX_DEPTH collections, or cannot be
 * parsed at all (left to the caller's parser to report, with its line);
 * -E2BIG with *LINE (1-based) where it went deeper; -ENOMEM. */
int yaml_limits__check_depth(const char *text, size_t len, unsigned max_depth, size_t *line);

#endif
