/*
 * similar.h: how far apart two names are, for "did you mean ...?" hints.
 */
#ifndef CMON_CORE_SIMILAR_H
#define CMON_CORE_SIMILAR_H

#include <stddef.h>

/* The edit distance of A and B (insertions, deletions, substitutions and
 * swaps of two neighbouring bytes each count one: a typist's slips), or
 * MAX + 1 when it is more than MAX.  Names longer than 255 bytes: MAX + 1. */
size_t similar__distance(const char *a, const char *b, size_t max);

/* The most a name of LEN bytes may differ from what the user typed to be
 * offered as what was meant: one slip in a short name, two in a long one. */
size_t similar__slack(size_t len);

#endif
