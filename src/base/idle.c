// SPDX-License-Identifier: MIT
/* --pm-qos and --keep-awake (idle.h). */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipclab/cleanup.h"
#include "ipclab/idle.h"
#include "ipclab/util.h"

#define MAX_SPINNERS 64

static int spinner_handle[MAX_SPINNERS];
static pid_t spinner_pid[MAX_SPINNERS];
static int spinner_cpu[MAX_SPINNERS];
static unsigned n_spinners;

int pm_qos_hold(int32_t us, char *err, size_t errlen)
{
	int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return errf(err, errlen, errno, "--pm-qos: cannot open /dev/cpu_dma_latency: %s%s",
			    strerror(errno), errno == EACCES ? " (needs root)" : "");
	if (write(fd, &us, sizeof(us)) != sizeof(us)) {
		int e = errno;

		close(fd);
		return errf(err, errlen, e, "--pm-qos: cannot write /dev/cpu_dma_latency: %s",
			    strerror(e));
	}
	return fd;
}

static void __attribute__((noreturn)) spin_forever(int cpu, pid_t parent)
{
	struct sched_param sp = { 0 };
	cpu_set_t set;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* a name of its own: --trace names it as ipclab's keep-awake loop
	 * when it takes an endpoint's CPU (TRACE_AWAKE_COMM, trace.h) */
	prctl(PR_SET_NAME, "ipclab-awake");
	if (getppid() != parent)
		_exit(0);
	signal(SIGINT, SIG_IGN);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) || sched_setscheduler(0, SCHED_IDLE, &sp))
		_exit(1);
	for (;;)
		cpu_relax();
}

int keep_awake_start(const int *cpus, unsigned n, char *err, size_t errlen)
{
	pid_t parent = getpid();

	for (unsigned i = 0; i < n && n_spinners < MAX_SPINNERS; i++) {
		int h = cleanup_add_id(CL_PID, -1);
		pid_t pid;

		if (h < 0)
			return errf(err, errlen, ENOMEM, "--keep-awake: too many objects");
		pid = fork();
		if (pid < 0) {
			cleanup_forget(h);
			return errf(err, errlen, errno, "--keep-awake: fork: %s", strerror(errno));
		}
		if (pid == 0)
			spin_forever(cpus[i], parent);
		cleanup_set_id(h, pid);
		spinner_pid[n_spinners] = pid;
		spinner_cpu[n_spinners] = cpus[i];
		spinner_handle[n_spinners++] = h;
	}
	return 0;
}

void keep_awake_stop(void)
{
	while (n_spinners)
		cleanup_run_one(spinner_handle[--n_spinners]);
}

unsigned keep_awake_tasks(int *pids, int *cpus, unsigned max)
{
	unsigned n = 0;

	for (; n < n_spinners && n < max; n++) {
		pids[n] = (int)spinner_pid[n];
		cpus[n] = spinner_cpu[n];
	}
	return n;
}
