/*
 * strv.h: a counted vector of owned strings (char **v, size_t n).
 */
#ifndef CMON_CORE_STRV_H
#define CMON_CORE_STRV_H

#include <stddef.h>

/* Append a copy of S.  0 or -ENOMEM (*V and *N unchanged). */
int strv__push(char ***v, size_t *n, const char *s);
/* Free the N strings and V (NULL fine). */
void strv__free(char **v, size_t n);

#endif
