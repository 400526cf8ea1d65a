/*
 * fetch_view.h: what a command shows while debuginfod fetches a debug
 * file (dwarf/debuginfod.h): on a terminal a progress line redrawn in
 * place, elsewhere one line when a fetch starts and one when it ends.
 */
#ifndef CMON_FETCH_VIEW_H
#define CMON_FETCH_VIEW_H

#include "elf/debuginfod.h"

/* DEBUGINFOD_URLS, read by main (NULL: unset). */
extern const char *cmon_debuginfod_urls;

/* Set debuginfod up for a command: off with NO_DEBUGINFOD, fetches shown
 * on stderr, abandoned at the user's stop signal.  0 or -ENOMEM. */
int fetch_view__setup(bool no_debuginfod);

#endif
