// SPDX-License-Identifier: MIT
/* Leftover checks for tp_direct: names carry our pid ("<prefix>-<pid>-<hex>",
 * cleanup_unique_name), SysV ids are recorded by wrapping msgget/semget/
 * shmget at link time (-Wl,--wrap), so programs running at the same time
 * cannot disturb the check; the private directory must be empty. */
#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "tp_direct.h"

#define MQUEUE_MAGIC 0x19800202
#define MAX_IDS 4096

enum { K_MSG, K_SEM, K_SHM };

static struct {
	int kind, id;
} sysv_ids[MAX_IDS];
static unsigned n_sysv_ids;
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static bool mqueue_mounted;

static void note_id(int kind, int id)
{
	pthread_mutex_lock(&ids_lock);
	if (id >= 0 && n_sysv_ids < MAX_IDS) {
		sysv_ids[n_sysv_ids].kind = kind;
		sysv_ids[n_sysv_ids++].id = id;
	}
	pthread_mutex_unlock(&ids_lock);
}

int __real_msgget(key_t key, int flg);
int __real_semget(key_t key, int n, int flg);
int __real_shmget(key_t key, size_t size, int flg);
int __wrap_msgget(key_t key, int flg);
int __wrap_semget(key_t key, int n, int flg);
int __wrap_shmget(key_t key, size_t size, int flg);

int __wrap_msgget(key_t key, int flg)
{
	int id = __real_msgget(key, flg);

	note_id(K_MSG, id);
	return id;
}

int __wrap_semget(key_t key, int n, int flg)
{
	int id = __real_semget(key, n, flg);

	note_id(K_SEM, id);
	return id;
}

int __wrap_shmget(key_t key, size_t size, int flg)
{
	int id = __real_shmget(key, size, flg);

	note_id(K_SHM, id);
	return id;
}

void leftovers_init(void)
{
	struct statfs sf;

	if (statfs("/dev/mqueue", &sf) == 0 && sf.f_type == MQUEUE_MAGIC) {
		mqueue_mounted = true;
		return;
	}
	if (geteuid() == 0) {
		mkdir("/dev/mqueue", 0755);
		mqueue_mounted = mount("none", "/dev/mqueue", "mqueue", 0, NULL) == 0;
	}
	if (!mqueue_mounted)
		printf("note: /dev/mqueue not mounted (not root?): POSIX queue leftovers unchecked\n");
}

/* Entries of dir whose name contains tag (every entry when tag is NULL). */
static unsigned scan_names(const char *name, const char *dir, const char *tag)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    (!tag || strstr(e->d_name, tag))) {
			printf("FAIL %s: left behind: %s/%s\n", name, dir, e->d_name);
			n++;
		}
	if (d)
		closedir(d);
	return n;
}

static bool sysv_exists(int kind, int id)
{
	struct msqid_ds m;
	struct semid_ds se;
	struct shmid_ds sh;

	if (kind == K_MSG)
		return msgctl(id, IPC_STAT, &m) == 0;
	if (kind == K_SEM)
		return semctl(id, 0, IPC_STAT, &se) == 0;
	return shmctl(id, IPC_STAT, &sh) == 0;
}

static void sysv_remove(int kind, int id)
{
	if (kind == K_MSG)
		msgctl(id, IPC_RMID, NULL);
	else if (kind == K_SEM)
		semctl(id, 0, IPC_RMID);
	else
		shmctl(id, IPC_RMID, NULL);
}

unsigned leftovers_report(const char *name, const char *dir)
{
	static const char *const kinds[] = { "msg", "sem", "shm" };
	char tag[32];
	unsigned n = 0;

	snprintf(tag, sizeof(tag), "-%d-", (int)getpid());
	if (mqueue_mounted)
		n += scan_names(name, "/dev/mqueue", tag);
	n += scan_names(name, "/dev/shm", tag);
	if (dir)
		n += scan_names(name, dir, NULL);
	pthread_mutex_lock(&ids_lock);
	for (unsigned i = 0; i < n_sysv_ids; i++) {
		if (!sysv_exists(sysv_ids[i].kind, sysv_ids[i].id))
			continue;
		printf("FAIL %s: left behind: SysV %s id %d\n", name, kinds[sysv_ids[i].kind],
		       sysv_ids[i].id);
		/* remove it, so that the next cases are judged on their own */
		sysv_remove(sysv_ids[i].kind, sysv_ids[i].id);
		n++;
	}
	n_sysv_ids = 0;
	pthread_mutex_unlock(&ids_lock);
	return n;
}
