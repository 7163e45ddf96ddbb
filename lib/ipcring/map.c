// SPDX-License-Identifier: MIT
/*
 * map.c - mapping a ring: the header once and the data area twice, back to
 * back (the "magic ring buffer"), so every record is contiguous; or once
 * with IPCRING_F_SINGLE_MAP. Attaching the same memfd twice in one process
 * (both ends in threads) shares one mapping, so that the two ends use the
 * same addresses, which is what ThreadSanitizer needs to see their
 * synchronisation. A shared mapping is keyed on the inode and on every
 * value of the header that its shape depends on (header size, capacity,
 * single or double), all taken from the attaching side's validated copy:
 * the shared header itself may have been rewritten since another attach.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "internal.h"

struct ring_map {
	struct ring_map *next;
	dev_t dev;
	ino_t ino;
	unsigned int refs;
	void *base;
	size_t len;
	uint32_t hdr_size;
	uint32_t capacity;
	bool single;
};

static pthread_mutex_t ring_maps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ring_map *ring_maps;

static int map_double(int fd, const struct ring_cfg *c, struct ring_map *m)
{
	size_t hdr = c->hdr_size, cap = c->capacity;
	uint8_t *base, *p;

	m->len = hdr + 2 * cap;
	base = mmap(NULL, m->len, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	p = mmap(base, hdr + cap, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0);
	if (p != MAP_FAILED)
		p = mmap(base + hdr + cap, cap, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, (off_t)hdr);
	if (p == MAP_FAILED) {
		int err = -errno;

		munmap(base, m->len);
		return err;
	}
	m->base = base;
	return 0;
}

static int map_single(int fd, const struct ring_cfg *c, struct ring_map *m)
{
	void *p;

	m->len = (size_t)c->hdr_size + c->capacity;
	p = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		 fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	m->base = p;
	return 0;
}

static bool cfg_single(const struct ring_cfg *c)
{
	return (c->flags & IPCRING_F_SINGLE_MAP) != 0;
}

/* A mapping of the same inode made for exactly this shape, or NULL. */
static struct ring_map *map_find(const struct stat *st, const struct ring_cfg *c)
{
	struct ring_map *m;

	for (m = ring_maps; m; m = m->next)
		if (m->dev == st->st_dev && m->ino == st->st_ino &&
		    m->hdr_size == c->hdr_size && m->capacity == c->capacity &&
		    m->single == cfg_single(c))
			return m;
	return NULL;
}

static int map_new(int fd, const struct stat *st, const struct ring_cfg *c,
		   struct ring_map **out)
{
	struct ring_map *m = calloc(1, sizeof(*m));
	int ret;

	if (!m)
		return -ENOMEM;
	if (cfg_single(c))
		ret = map_single(fd, c, m);
	else
		ret = map_double(fd, c, m);
	if (ret) {
		free(m);
		return ret;
	}
	m->dev = st->st_dev;
	m->ino = st->st_ino;
	m->hdr_size = c->hdr_size;
	m->capacity = c->capacity;
	m->single = cfg_single(c);
	m->refs = 1;
	m->next = ring_maps;
	ring_maps = m;
	*out = m;
	return 0;
}

/*
 * Get (or share) the mapping of @fd. @st is the fstat() that the attach
 * validated the fd with, @cfg its validated private copy of the header; the
 * shape of the mapping comes from these alone, never from the shared
 * header. *@data_len receives the bytes mapped at *@data: capacity, or
 * twice that when the data area is mapped twice.
 */
int ring_map_get(int fd, const struct stat *st, const struct ring_cfg *cfg,
		 struct ring_map **out, struct ring_shm **shm, uint8_t **data,
		 size_t *data_len)
{
	struct ring_map *m;
	int ret = 0;

	pthread_mutex_lock(&ring_maps_lock);
	m = map_find(st, cfg);
	if (m)
		m->refs++;
	else
		ret = map_new(fd, st, cfg, &m);
	pthread_mutex_unlock(&ring_maps_lock);
	if (ret)
		return ret;
	*out = m;
	*shm = m->base;
	*data = (uint8_t *)m->base + m->hdr_size;
	*data_len = m->len - m->hdr_size;
	return 0;
}

void ring_map_put(struct ring_map *m)
{
	struct ring_map **pp;

	pthread_mutex_lock(&ring_maps_lock);
	if (--m->refs) {
		pthread_mutex_unlock(&ring_maps_lock);
		return;
	}
	for (pp = &ring_maps; *pp; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	pthread_mutex_unlock(&ring_maps_lock);
	munmap(m->base, m->len);
	free(m);
}
