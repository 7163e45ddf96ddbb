/* SPDX-License-Identifier: MIT */
/* tp_direct's leftover checks (tp_leftover.c). */
#ifndef TP_DIRECT_H
#define TP_DIRECT_H

/* Mount the mqueue filesystem on /dev/mqueue if needed (as root). */
void leftovers_init(void);
/* Print "FAIL <name>: left behind: ..." for each object of this process
 * still present (POSIX queues and shm by the pid in their names, SysV
 * objects this process created, anything in dir); returns their number. */
unsigned leftovers_report(const char *name, const char *dir);

#endif
