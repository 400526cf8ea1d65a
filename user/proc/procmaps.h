/*
 * procmaps.h: the executable objects a process maps, from /proc/PID/maps,
 * named so cmon can open them and attach to them from its own mount
 * namespace (containers) even when the file was replaced or deleted.
 */
#ifndef CMON_PROCMAPS_H
#define CMON_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_object {
	char *path;      /* as the process sees it: "/usr/lib/x86_64-linux-gnu/libc.so.6" */
	char *open_path; /* what cmon opens and attaches to: "/proc/PID/root" + path,
	                  * or "/proc/PID/map_files/START-END" when the file is deleted */
	uint64_t dev;    /* makedev(major, minor) from maps */
	uint64_t inode;
	uint64_t start;  /* lowest mapping address of the object */
	bool deleted;    /* maps says " (deleted)" */
	bool exe;        /* the main executable (/proc/PID/exe) */
};

/*
 * The distinct file-backed objects with at least one executable mapping in
 * process PID, the main executable first (the object /proc/PID/exe names),
 * the others in address order.  Pseudo-mappings ([vdso], [stack], memfd:,
 * anonymous) are left out.  Returns 0 and an array the caller frees with
 * proc_objects__free, or a negative errno: -ESRCH when the process does not
 * exist, -EACCES, -ENOMEM.
 */
int proc_objects__read(pid_t pid, struct proc_object **objs, size_t *count);
void proc_objects__free(struct proc_object *objs, size_t count);

/* Parse one line of /proc/PID/maps.  Returns 0 and fills OUT (path points
 * into LINE, NULL for anonymous mappings), or -EINVAL.  Exposed for tests. */
struct maps_line {
	uint64_t start, end, offset, inode;
	unsigned dev_major, dev_minor;
	char perms[5];
	const char *path;
	bool deleted;
};
int maps_line__parse(char *line, struct maps_line *out);

/* Does process PID exist (and is it not a zombie)? */
bool proc__alive(pid_t pid);

/* The process (thread group) of thread ID, from /proc/ID/status: > 0, or
 * 0 when it cannot be read. */
pid_t proc__tgid(pid_t id);

/* From /proc/PID/stat (TID > 0: /proc/PID/task/TID/stat): the state
 * letter ('R', 'S', 'T', 'Z'...; 0 when gone or unreadable) and, with
 * START, the start time (clock ticks after boot: a pid reused is another
 * process). */
char proc__stat(pid_t pid, pid_t tid, unsigned long long *start);

/* Process PID's parent (/proc/PID/stat); 0 when gone or unreadable. */
pid_t proc__ppid(pid_t pid);

/* The processes whose parent is PID (/proc/N/stat's ppid), alive or
 * zombies, into *KIDS (malloc'd, *N of them; NULL when none).  0 or
 * -ENOMEM. */
int proc__children(pid_t pid, pid_t **kids, size_t *n);

/* Process PID's name (/proc/PID/comm, without its newline) into COMM[LEN];
 * "" when gone or unreadable. */
void proc__comm(pid_t pid, char *comm, size_t len);

#endif
