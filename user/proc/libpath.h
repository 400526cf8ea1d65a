/*
 * libpath.h: which files a program will map before it runs, so a launched
 * program can be probed from its first instruction: the executable found as
 * execvp would find it, and the closure of its DT_NEEDED libraries found as
 * the dynamic loader would (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH,
 * /etc/ld.so.cache, the default directories).
 */
#ifndef CMON_LIBPATH_H
#define CMON_LIBPATH_H

#include <stdbool.h>
#include <stddef.h>

/* Resolve CMD as execvp does (a name with '/' is used as is, otherwise each
 * $PATH entry); the result is made absolute.  Returns 0 and a malloc'd path,
 * or -ENOENT / -EACCES. */
int libpath__find_exe(const char *cmd, char **path);

/* The executable EXE followed by every library it needs, transitively, each
 * once, as absolute paths (the program interpreter, PT_INTERP, included).
 * Libraries that cannot be found are skipped with a debug log line; a
 * non-ELF EXE gives -ENOEXEC.  The caller frees with libpath__free. */
int libpath__needed_closure(const char *exe, char ***paths, size_t *count);

/* Find one library by soname or file name ("libc.so.6") the way the loader
 * would for EXE (NULL: the cache and default directories only). */
int libpath__find_library(const char *exe, const char *name, char **path);

/* A library the program opens by a path of its own (dlopen("./libfoo.so")):
 * the first regular file whose name ACCEPT takes, in the working directory
 * (where a relative path starts) and then EXE's directory; the exact NAME
 * first in each.  Returns 0 and a malloc'd absolute path, or -ENOENT. */
int libpath__find_beside(const char *exe, const char *name,
			 bool (*accept)(const char *file_name, void *ctx), void *ctx, char **path);

void libpath__free(char **paths, size_t count);

/* Look NAME up in the ld.so cache CACHE_FILE (NULL: /etc/ld.so.cache) as the
 * x86-64 loader would, without checking the file exists.  Returns 0 and a
 * malloc'd path, -ENOENT, or -EINVAL for a file that is not a cache.
 * Exposed for tests. */
int libpath__cache_lookup(const char *cache_file, const char *name, char **path);

#endif
