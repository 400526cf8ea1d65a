// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * spool.c: a FIFO of records in chunks.  Records are framed (size, kind,
 * bytes padded to 8) into the write chunk; a full chunk joins the queue,
 * in memory while the memory quota lasts, else compressed into the spill
 * file (appended; read back in the same order).  Reading takes the queue's
 * oldest chunk, or the write chunk itself once the queue is empty.  When
 * nothing is left on disk, the file is cut back to nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lz4.h>
#include "event/spool.h"

#define CHUNK_BYTES (256u << 10)
#define DEFAULT_MEM (1u << 20)
#define DEFAULT_DISK (1ull << 30)

struct frame {
	uint32_t size, kind;
};

/* A full chunk: in memory (MEM), or the next one in the spill file. */
struct qent {
	uint8_t *mem;
	uint32_t len, cap;
};

/* A chunk on disk: its header, then LZ4 bytes. */
struct disk_hdr {
	uint32_t raw, comp;
};

struct spool {
	int fd; /* the spill file; -1: memory only */
	size_t mem_max, mem_held; /* bytes of queued chunks in memory */
	uint64_t disk_max, wr_off, rd_off;
	uint8_t *w; /* the write chunk */
	size_t wlen, wcap;
	struct qent *q; /* a ring of QCAP entries: [qhead, qhead + qn) */
	size_t qhead, qn, qcap, q_disk;
	uint8_t *r; /* the chunk being read */
	size_t rlen, rpos, rcap;
	char *cbuf; /* compressed bytes, either way */
	size_t cbuf_cap;
	uint8_t *spare; /* a CHUNK_BYTES buffer to reuse */
	struct spool_stats st; /* st.waiting: atomic (put and take may race) */
	/* SHARED: one thread puts, another takes; the lock guards all but
	 * the read chunk, which is the taker's alone. */
	bool shared;
	pthread_mutex_t mu;
};

static void lock(struct spool *s)
{
	if (s->shared)
		pthread_mutex_lock(&s->mu);
}

static void unlock(struct spool *s)
{
	if (s->shared)
		pthread_mutex_unlock(&s->mu);
}

static size_t frame_bytes(size_t size) { return sizeof(struct frame) + ((size + 7) & ~(size_t)7); }

static int open_spill(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	return fd < 0 ? -errno : fd;
}

struct spool *spool__new(const struct spool_opts *o)
{
	struct spool *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->mem_max = o && o->mem_bytes ? o->mem_bytes : DEFAULT_MEM;
	s->disk_max = o && o->max_bytes ? o->max_bytes : DEFAULT_DISK;
	/* Beside the output when it can be (its filesystem may lack
	 * O_TMPFILE), else the temporary folder; else memory only. */
	s->fd = o && o->dir ? open_spill(o->dir) : -1;
	if (s->fd < 0 && !(o && o->memory_only))
		s->fd = open_spill(P_tmpdir);
	if (s->fd < 0)
		s->fd = -1;
	s->st.on_disk = s->fd >= 0;
	s->shared = o && o->shared;
	if (s->shared)
		pthread_mutex_init(&s->mu, NULL);
	s->wcap = CHUNK_BYTES;
	s->w = malloc(s->wcap);
	if (!s->w) {
		spool__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void spool__free(struct spool *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->qn; i++)
		free(s->q[(s->qhead + i) % s->qcap].mem);
	free(s->q);
	free(s->w);
	free(s->r);
	free(s->cbuf);
	free(s->spare);
	if (s->fd >= 0)
		close(s->fd);
	if (s->shared)
		pthread_mutex_destroy(&s->mu);
	free(s);
}

static uint8_t *chunk_buf(struct spool *s)
{
	uint8_t *b = s->spare;

	s->spare = NULL;
	return b ? b : malloc(CHUNK_BYTES);
}

/* A buffer done with: kept as the spare when it is a chunk's size. */
static void chunk_done(struct spool *s, uint8_t *b, size_t cap)
{
	if (cap == CHUNK_BYTES && !s->spare)
		s->spare = b;
	else
		free(b);
}

static int queue_push(struct spool *s, struct qent e)
{
	if (s->qn == s->qcap) {
		size_t cap = s->qcap ? s->qcap * 2 : 64;
		struct qent *q = malloc(cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		for (size_t i = 0; i < s->qn; i++)
			q[i] = s->q[(s->qhead + i) % s->qcap];
		free(s->q);
		s->q = q;
		s->qcap = cap;
		s->qhead = 0;
	}
	s->q[(s->qhead + s->qn++) % s->qcap] = e;
	return 0;
}

static int cbuf_room(struct spool *s, size_t n)
{
	char *b;

	if (n <= s->cbuf_cap)
		return 0;
	b = realloc(s->cbuf, n);
	if (!b)
		return -ENOMEM;
	s->cbuf = b;
	s->cbuf_cap = n;
	return 0;
}

/* The write chunk, compressed, to the end of the spill file. */
static int spill(struct spool *s)
{
	struct disk_hdr h = { (uint32_t)s->wlen, 0 };
	int bound = LZ4_compressBound((int)s->wlen), n, err;
	ssize_t wr;

	err = cbuf_room(s, sizeof(h) + (size_t)bound);
	if (err)
		return err;
	n = LZ4_compress_default((const char *)s->w, s->cbuf + sizeof(h), (int)s->wlen, bound);
	if (n <= 0)
		return -EIO;
	h.comp = (uint32_t)n;
	memcpy(s->cbuf, &h, sizeof(h));
	wr = pwrite(s->fd, s->cbuf, sizeof(h) + (size_t)n, (off_t)s->wr_off);
	if (wr < 0)
		return -errno;
	if ((size_t)wr != sizeof(h) + (size_t)n)
		return -ENOSPC;
	err = queue_push(s, (struct qent){ NULL, (uint32_t)s->wlen, 0 });
	if (err)
		return err;
	s->q_disk++;
	s->wr_off += (uint64_t)wr;
	s->st.disk_bytes += (uint64_t)wr;
	if (s->wr_off - s->rd_off > s->st.peak_disk)
		s->st.peak_disk = s->wr_off - s->rd_off;
	s->wlen = 0;
	return 0;
}

/* The write chunk joins the queue: in memory while the quota lasts, else
 * on disk.  -ENOSPC: neither has room. */
static int seal(struct spool *s)
{
	uint8_t *fresh;
	int err;

	if (!s->wlen)
		return 0;
	if (s->mem_held + s->wcap <= s->mem_max) {
		fresh = chunk_buf(s);
		if (!fresh)
			return -ENOMEM;
		err = queue_push(s, (struct qent){ s->w, (uint32_t)s->wlen, (uint32_t)s->wcap });
		if (err) {
			chunk_done(s, fresh, CHUNK_BYTES);
			return err;
		}
		s->mem_held += s->wcap;
		s->w = fresh;
		s->wcap = CHUNK_BYTES;
		s->wlen = 0;
		return 0;
	}
	if (s->fd < 0 || s->wr_off - s->rd_off + s->wlen > s->disk_max)
		return -ENOSPC;
	return spill(s);
}

static int put(struct spool *s, uint32_t kind, const void *rec, size_t size)
{
	size_t need = frame_bytes(size);
	struct frame f = { (uint32_t)size, kind };
	int err;

	if (s->wlen + need > s->wcap) {
		err = seal(s);
		if (err)
			return err;
		if (need > s->wcap) { /* a record larger than a chunk: its own */
			uint8_t *b = malloc(need);

			if (!b)
				return -ENOMEM;
			chunk_done(s, s->w, s->wcap);
			s->w = b;
			s->wcap = need;
		}
	}
	memcpy(s->w + s->wlen, &f, sizeof(f));
	memcpy(s->w + s->wlen + sizeof(f), rec, size);
	s->wlen += need;
	s->st.records++;
	__atomic_add_fetch(&s->st.waiting, 1, __ATOMIC_RELEASE);
	s->st.raw_bytes += size;
	return 0;
}

int spool__put(struct spool *s, uint32_t kind, const void *rec, size_t size)
{
	int err;

	lock(s);
	err = put(s, kind, rec, size);
	unlock(s);
	return err;
}

static bool has_room(const struct spool *s, size_t bytes)
{
	size_t mem = s->mem_max > s->mem_held ? s->mem_max - s->mem_held : 0;

	if (bytes <= mem + (s->wcap - s->wlen))
		return true;
	/* Compressed records take less than their raw bytes: the raw count
	 * bounds them (plus a chunk's headers and LZ4's worst case). */
	return s->fd >= 0 && s->wr_off - s->rd_off + bytes + bytes / 128 + CHUNK_BYTES <= s->disk_max;
}

bool spool__has_room(struct spool *s, size_t bytes)
{
	bool room;

	lock(s);
	room = has_room(s, bytes);
	unlock(s);
	return room;
}

bool spool__empty(const struct spool *s)
{
	return __atomic_load_n(&s->st.waiting, __ATOMIC_ACQUIRE) == 0;
}

/* The next chunk from the spill file into the read buffer. */
static int read_disk(struct spool *s, uint32_t raw)
{
	struct disk_hdr h;
	ssize_t n = pread(s->fd, &h, sizeof(h), (off_t)s->rd_off);
	int err;

	if (n != (ssize_t)sizeof(h) || h.raw != raw)
		return n < 0 ? -errno : -EIO;
	err = cbuf_room(s, h.comp);
	if (err)
		return err;
	n = pread(s->fd, s->cbuf, h.comp, (off_t)(s->rd_off + sizeof(h)));
	if (n != (ssize_t)h.comp)
		return n < 0 ? -errno : -EIO;
	s->rd_off += sizeof(h) + h.comp;
	if (!s->r || s->rcap < raw) {
		uint8_t *b = raw <= CHUNK_BYTES ? chunk_buf(s) : malloc(raw);

		if (!b)
			return -ENOMEM;
		if (s->r)
			chunk_done(s, s->r, s->rcap);
		s->r = b;
		s->rcap = raw <= CHUNK_BYTES ? CHUNK_BYTES : raw;
	}
	if (LZ4_decompress_safe(s->cbuf, (char *)s->r, (int)h.comp, (int)s->rcap) != (int)raw)
		return -EIO;
	s->rlen = raw;
	s->rpos = 0;
	return 0;
}

/* A chunk that cannot be read back: how many records it held is not
 * known without it, so everything that waits is let go, counted lost. */
static void lose_all(struct spool *s)
{
	s->st.lost += __atomic_exchange_n(&s->st.waiting, 0, __ATOMIC_ACQ_REL);
	for (size_t i = 0; i < s->qn; i++)
		free(s->q[(s->qhead + i) % s->qcap].mem);
	s->qn = s->qhead = s->q_disk = 0;
	s->mem_held = 0;
	s->wlen = 0;
	s->rlen = s->rpos = 0;
}

/* The oldest chunk becomes the read chunk.  0, 1 when nothing waits,
 * or -errno. */
static int next_chunk(struct spool *s)
{
	if (s->qn) {
		struct qent e = s->q[s->qhead];
		int err;

		s->qhead = (s->qhead + 1) % s->qcap;
		s->qn--;
		if (!e.mem) {
			s->q_disk--;
			err = read_disk(s, e.len);
			if (err) {
				lose_all(s);
				return err;
			}
		} else {
			if (s->r)
				chunk_done(s, s->r, s->rcap);
			s->mem_held -= e.cap;
			s->r = e.mem;
			s->rcap = e.cap;
			s->rlen = e.len;
			s->rpos = 0;
		}
	} else if (s->wlen) {
		uint8_t *fresh = chunk_buf(s);

		if (!fresh)
			return -ENOMEM;
		if (s->r)
			chunk_done(s, s->r, s->rcap);
		s->r = s->w;
		s->rcap = s->wcap;
		s->rlen = s->wlen;
		s->rpos = 0;
		s->w = fresh;
		s->wcap = CHUNK_BYTES;
		s->wlen = 0;
	} else {
		return 1;
	}
	if (!s->q_disk && s->fd >= 0 && s->wr_off) {
		/* Nothing left on disk: the file starts again. */
		s->wr_off = s->rd_off = 0;
		if (ftruncate(s->fd, 0))
			return -errno;
	}
	return 0;
}

int spool__take(struct spool *s, size_t max, spool_fn fn, void *ctx)
{
	size_t done = 0;

	while (!max || done < max) {
		struct frame f;
		int err;

		if (s->rpos >= s->rlen) {
			lock(s);
			err = next_chunk(s);
			unlock(s);
			if (err)
				return err > 0 ? 0 : err;
			continue;
		}
		memcpy(&f, s->r + s->rpos, sizeof(f));
		s->rpos += frame_bytes(f.size);
		__atomic_sub_fetch(&s->st.waiting, 1, __ATOMIC_RELEASE);
		done++;
		err = fn(ctx, f.kind, s->r + s->rpos - frame_bytes(f.size) + sizeof(f), f.size);
		if (err)
			return err;
	}
	return 0;
}

void spool__stats(struct spool *s, struct spool_stats *out)
{
	lock(s);
	*out = s->st;
	unlock(s);
}
