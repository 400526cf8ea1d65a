/*
 * view.h: private to user/output/.  Views are the formats that look at a
 * run as a whole rather than one line per record: Chrome Trace Event JSON
 * (chrome.c), call trees (tree.c) and folded stacks (folded.c).  The writer
 * object hands them every record; they keep what they need and write on
 * their own schedule (chrome at once, tree per finished outermost call,
 * folded at the end).
 */
#ifndef CMON_VIEW_H
#define CMON_VIEW_H

#include <stdbool.h>
#include <stdio.h>
#include "record.h"
#include "writer.h"

struct view;

struct view_ops {
	int (*write)(struct view *v, const struct call_record *rec); /* 0 or -errno */
	int (*finish)(struct view *v);                               /* write the rest */
	void (*free)(struct view *v);
};

struct view {
	const struct view_ops *ops;
	FILE *out;
	bool replay; /* records come from a store in entry order (writer__set_replay) */
};

/* The view for FMT (OUT_CHROME, OUT_TREE, OUT_FOLDED) on OUT; NULL + errno. */
struct view *view__new(enum out_format fmt, FILE *out);

struct view *chrome_view__new(void);
struct view *tree_view__new(void);
struct view *folded_view__new(void);

/* stdio errors as -errno (EIO when stdio does not say). */
int view__put(struct view *v, const char *s, size_t n);

#endif
