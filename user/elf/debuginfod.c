// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * debuginfod.c: debug files by build ID from debuginfod servers (elfutils'
 * client), each build ID's answer kept for the process, fetched in the
 * foreground (a command: progress shown, the user's stop abandons it) or
 * on one worker thread (the agent: a lookup never waits).
 */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/grow.h"
#include "core/log.h"
#include "elf/debuginfod.h"

#define ANSWER_PENDING 1 /* queued or being fetched */

struct answer {
	char *key;   /* the build ID, hex */
	char *file;  /* the first file it was asked for */
	char *path;  /* in the cache, when found */
	int state;   /* 0 found, ANSWER_PENDING, or -errno */
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t changed; /* an answer became known, or work was queued */
	struct debuginfod_setup s;
	char *urls;
	struct answer *v;
	size_t n, cap;
	unsigned generation;
	bool worker_started, quit;
	pthread_t worker;
} D = { .mu = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER };

static __thread unsigned deferred;

int debuginfod__setup(const struct debuginfod_setup *s)
{
	char *urls = strdup(s->urls ? s->urls : "");

	if (!urls)
		return -ENOMEM;
	pthread_mutex_lock(&D.mu);
	free(D.urls);
	D.urls = urls;
	D.s = *s;
	D.s.urls = D.urls;
	pthread_mutex_unlock(&D.mu);
	return 0;
}

bool debuginfod__enabled(void)
{
	return D.urls && D.urls[0] && !D.s.disabled;
}

const char *debuginfod__urls(void)
{
	return debuginfod__enabled() ? D.urls : "";
}

unsigned debuginfod__generation(void)
{
	return __atomic_load_n(&D.generation, __ATOMIC_ACQUIRE);
}

unsigned debuginfod__deferred(void)
{
	return deferred;
}

static char *hex_of(const unsigned char *bid, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char *h = malloc(2 * len + 1);

	if (!h)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		h[2 * i] = digits[bid[i] >> 4];
		h[2 * i + 1] = digits[bid[i] & 15];
	}
	h[2 * len] = '\0';
	return h;
}

/* Under the lock. */
static struct answer *answer_of(const char *key)
{
	for (size_t i = 0; i < D.n; i++)
		if (!strcmp(D.v[i].key, key))
			return &D.v[i];
	return NULL;
}

static void say_failure(const struct answer *a, int err)
{
	if (err == -ENOENT)
		log_warn("%s: no debuginfod server has its debug info (build-id %s): untyped",
			 a->file, a->key);
	else if (err == -EINTR)
		log_warn("%s: fetching its debug info was abandoned: untyped", a->file);
	else
		log_warn("%s: its debug info (build-id %s) could not be fetched from %s: %s: "
			 "untyped", a->file, a->key, D.urls, strerror(-err));
}

/* libdebuginfod is opened when a fetch is first needed, as libdw itself
 * does: linked in, it brings libcurl and a TLS stack (~10 MB of RSS) into
 * every trace, most of which never fetch anything. */
static struct {
	pthread_once_t once;
	int err; /* 0 loaded, or -ELIBACC */
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id, int len, char **path);
	const char *(*get_url)(debuginfod_client *c);
	void *(*get_user_data)(debuginfod_client *c);
	void (*set_user_data)(debuginfod_client *c, void *data);
	void (*set_progressfn)(debuginfod_client *c, debuginfod_progressfn_t fn);
} L = { .once = PTHREAD_ONCE_INIT };

static void lib_open(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);

	L.err = -ELIBACC;
	if (!h) {
		log_warn("debuginfod: cannot open libdebuginfod.so.1 (%s): no downloads", dlerror());
		return;
	}
	*(void **)&L.begin = dlsym(h, "debuginfod_begin");
	*(void **)&L.end = dlsym(h, "debuginfod_end");
	*(void **)&L.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&L.get_url = dlsym(h, "debuginfod_get_url");
	*(void **)&L.get_user_data = dlsym(h, "debuginfod_get_user_data");
	*(void **)&L.set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&L.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	if (!L.begin || !L.end || !L.find_debuginfo || !L.get_url || !L.get_user_data ||
	    !L.set_user_data || !L.set_progressfn) {
		log_warn("debuginfod: libdebuginfod.so.1 lacks a function cmon uses: no downloads");
		return;
	}
	L.err = 0;
}

struct fetch_ctx {
	const char *file;
	bool foreground;
	bool asked; /* a server was asked: not a cache hit */
};

static int on_progress(debuginfod_client *c, long done, long total)
{
	struct fetch_ctx *f = L.get_user_data(c);
	volatile sig_atomic_t *stop = D.s.stop;

	f->asked = true;
	if (f->foreground ? stop && *stop : __atomic_load_n(&D.quit, __ATOMIC_ACQUIRE))
		return 1; /* abandon the transfer */
	if (f->foreground && D.s.progress) {
		struct debuginfod_progress p = {
			.file = f->file, .url = L.get_url(c), .done = done, .total = total,
		};

		/* Before a server answers, DONE counts the client's waits. */
		if (!p.url)
			p.done = p.total = 0;
		D.s.progress(D.s.ctx, &p);
	}
	return 0;
}

/* One fetch, without the lock.  0 and *PATH, or -errno. */
static int fetch(const char *key, const char *file, bool foreground, char **path)
{
	struct fetch_ctx f = { .file = file, .foreground = foreground };
	debuginfod_client *c;
	int fd;

	*path = NULL;
	pthread_once(&L.once, lib_open);
	if (L.err)
		return L.err;
	c = L.begin();
	if (!c)
		return -ENOMEM;
	L.set_user_data(c, &f);
	L.set_progressfn(c, on_progress);
	/* LEN 0: the build ID as hex text. */
	fd = L.find_debuginfo(c, (const unsigned char *)key, 0, path);
	if (foreground && D.s.progress && f.asked) {
		struct debuginfod_progress p = {
			.file = file, .url = L.get_url(c), .finished = true,
			.err = fd < 0 ? fd : 0,
		};
		struct stat st;

		if (fd >= 0 && !fstat(fd, &st))
			p.done = p.total = (long)st.st_size;
		D.s.progress(D.s.ctx, &p);
	}
	L.end(c);
	if (fd < 0) {
		free(*path);
		*path = NULL;
		/* An abandoned transfer comes back as another error. */
		if (foreground && D.s.stop && *D.s.stop)
			return -EINTR;
		return fd;
	}
	close(fd);
	return *path ? 0 : -ENOMEM;
}

/* Under the lock: record A's answer and wake whoever waits for it. */
static void settle(struct answer *a, int err, char *path)
{
	a->state = err;
	a->path = path;
	if (err)
		say_failure(a, err);
	__atomic_add_fetch(&D.generation, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&D.changed);
}

/* The worker: the pending answers, oldest first, one at a time. */
static void *worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&D.mu);
	while (!D.quit) {
		struct answer *a = NULL;
		char *key, *file, *path = NULL;
		int err;

		for (size_t i = 0; i < D.n && !a; i++)
			if (D.v[i].state == ANSWER_PENDING)
				a = &D.v[i];
		if (!a) {
			pthread_cond_wait(&D.changed, &D.mu);
			continue;
		}
		key = strdup(a->key);
		file = strdup(a->file);
		pthread_mutex_unlock(&D.mu);
		err = key && file ? fetch(key, file, false, &path) : -ENOMEM;
		pthread_mutex_lock(&D.mu);
		a = answer_of(key ? key : "");
		if (a)
			settle(a, err, path);
		else
			free(path);
		free(key);
		free(file);
	}
	pthread_mutex_unlock(&D.mu);
	return NULL;
}

int debuginfod__find(const unsigned char *bid, size_t len, const char *file, char **path)
{
	struct answer *a;
	char *key, *got = NULL;
	int err;

	*path = NULL;
	if (!debuginfod__enabled())
		return -ENOSYS;
	key = hex_of(bid, len);
	if (!key)
		return -ENOMEM;
	pthread_mutex_lock(&D.mu);
	if (!answer_of(key)) {
		char *k = strdup(key), *f = strdup(file);

		if (!k || !f || GROW(D.v, D.n, D.cap, 16)) {
			free(k);
			free(f);
			err = -ENOMEM;
			goto out;
		}
		a = &D.v[D.n++];
		*a = (struct answer){ .key = k, .file = f, .state = ANSWER_PENDING };
		if (!D.s.background) {
			/* The table stays usable while this thread waits on the
			 * network; the answer is this thread's to settle. */
			pthread_mutex_unlock(&D.mu);
			err = fetch(key, file, true, &got);
			pthread_mutex_lock(&D.mu);
			settle(answer_of(key), err, got);
		} else if (D.worker_started ||
			   (D.worker_started = !pthread_create(&D.worker, NULL, worker_main, NULL))) {
			pthread_cond_broadcast(&D.changed);
		} else {
			settle(a, -EAGAIN, NULL);
		}
	}
	/* A foreground lookup waits for another thread's fetch of the same
	 * build ID; a background one does not. */
	while (!D.s.background && (a = answer_of(key)) && a->state == ANSWER_PENDING)
		pthread_cond_wait(&D.changed, &D.mu);
	a = answer_of(key);
	if (a->state == ANSWER_PENDING) {
		deferred++;
		err = -EAGAIN;
	} else if (a->state == 0) {
		*path = strdup(a->path);
		err = *path ? 0 : -ENOMEM;
	} else {
		err = a->state;
	}
out:
	pthread_mutex_unlock(&D.mu);
	free(key);
	return err;
}

void debuginfod__reject(const unsigned char *bid, size_t len, const char *file,
			const char *path, const char *reason)
{
	char *key = hex_of(bid, len);
	struct answer *a;

	pthread_mutex_lock(&D.mu);
	a = key ? answer_of(key) : NULL;
	if (a && a->state != -EBADMSG) {
		a->state = -EBADMSG;
		log_warn("%s: the debug file debuginfod served (%s) is not used: %s: untyped",
			 file, path, reason);
	}
	pthread_mutex_unlock(&D.mu);
	free(key);
}

void debuginfod__shutdown(void)
{
	bool joined = false;

	pthread_mutex_lock(&D.mu);
	__atomic_store_n(&D.quit, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&D.changed);
	if (D.worker_started) {
		D.worker_started = false;
		joined = true;
	}
	pthread_mutex_unlock(&D.mu);
	if (joined)
		pthread_join(D.worker, NULL);
	pthread_mutex_lock(&D.mu);
	for (size_t i = 0; i < D.n; i++) {
		free(D.v[i].key);
		free(D.v[i].file);
		free(D.v[i].path);
	}
	free(D.v);
	D.v = NULL;
	D.n = D.cap = 0;
	D.quit = false;
	pthread_mutex_unlock(&D.mu);
}
