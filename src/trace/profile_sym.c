// SPDX-License-Identifier: MIT
/* --profile's names for addresses: the kernel's from /proc/kallsyms (its
 * text symbols, sorted), a process's from the symbol tables of the objects
 * its maps list, through elfutils' libdwfl. The maps are a snapshot taken
 * while the side lived, so a forked side is resolved by its own mappings. */
#ifdef HAVE_LIBDW

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_int.h"

struct ksym {
	uint64_t addr;
	uint32_t name, object;		/* offsets into the names */
};

struct ksyms {
	struct ksym *v;
	size_t n, cap;
	char *names;
	size_t nlen, ncap;
};

static int names_add(struct ksyms *k, const char *s, uint32_t *off)
{
	size_t l = strlen(s) + 1;

	if (k->nlen + l > k->ncap) {
		size_t cap = k->ncap ? k->ncap * 2 : 1 << 20;
		char *n = realloc(k->names, cap);

		if (!n)
			return -ENOMEM;
		k->names = n;
		k->ncap = cap;
	}
	memcpy(k->names + k->nlen, s, l);
	*off = (uint32_t)k->nlen;
	k->nlen += l;
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int ksyms_add(struct ksyms *k, uint64_t addr, const char *name, const char *mod,
		     uint32_t *kernel_off)
{
	struct ksym s = { .addr = addr };

	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 65536;
		struct ksym *v = realloc(k->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		k->v = v;
		k->cap = cap;
	}
	if (names_add(k, name, &s.name))
		return -ENOMEM;
	if (!*mod)
		s.object = *kernel_off;
	else if (names_add(k, mod, &s.object))
		return -ENOMEM;
	k->v[k->n++] = s;
	return 0;
}

static void hidden_why(char *why, size_t len)
{
	int kr = -1;
	FILE *f = fopen("/proc/sys/kernel/kptr_restrict", "re");

	if (f) {
		if (fscanf(f, "%d", &kr) != 1)
			kr = -1;
		fclose(f);
	}
	snprintf(why, len, "/proc/kallsyms hides kernel addresses (kernel.kptr_restrict=%d): kernel "
		 "symbols need root with kptr_restrict <= 1; run as root, or sysctl -w "
		 "kernel.kptr_restrict=1", kr);
}

struct ksyms *ksyms_load(char *why, size_t len)
{
	struct ksyms *k = calloc(1, sizeof(*k));
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], name[256], raw[120], mod[128], type;
	unsigned long long addr;
	uint32_t kernel_off = 0;
	bool any = false;

	if (!k || !f || names_add(k, "[kernel.kallsyms]", &kernel_off)) {
		snprintf(why, len, "cannot read /proc/kallsyms: %s", strerror(f ? ENOMEM : errno));
		goto fail;
	}
	while (fgets(line, sizeof(line), f)) {
		raw[0] = mod[0] = '\0';
		if (sscanf(line, "%llx %c %255s [%119[^]]]", &addr, &type, name, raw) < 3)
			continue;
		if (addr)
			any = true;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (*raw)
			snprintf(mod, sizeof(mod), "[%s]", raw);
		if (ksyms_add(k, addr, name, mod, &kernel_off)) {
			snprintf(why, len, "out of memory reading /proc/kallsyms");
			goto fail;
		}
	}
	if (!any) {
		hidden_why(why, len);
		goto fail;
	}
	fclose(f);
	qsort(k->v, k->n, sizeof(*k->v), ksym_cmp);
	return k;
fail:
	if (f)
		fclose(f);
	ksyms_free(k);
	return NULL;
}

const char *ksyms_find(const struct ksyms *k, uint64_t addr, const char **object)
{
	size_t lo = 0, hi = k ? k->n : 0;

	*object = "[kernel.kallsyms]";
	while (lo < hi) {		/* the last symbol at or below addr */
		size_t mid = lo + (hi - lo) / 2;

		if (k->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	*object = k->names + k->v[lo - 1].object;
	return k->names + k->v[lo - 1].name;
}

void ksyms_free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->v);
	free(k->names);
	free(k);
}

/* ---- user space ------------------------------------------------------------ */

struct usyms {
	Dwfl *dwfl;
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

struct usyms *usyms_open(int pid, const char *maps, size_t maps_len)
{
	struct usyms *u = calloc(1, sizeof(*u));
	FILE *f;

	if (!u || !(u->dwfl = dwfl_begin(&proc_callbacks))) {
		free(u);
		return NULL;
	}
	dwfl_report_begin(u->dwfl);
	f = maps_len ? fmemopen((void *)maps, maps_len, "r") : NULL;
	if (f) {
		dwfl_linux_proc_maps_report(u->dwfl, f);
		fclose(f);
	}
	dwfl_report_end(u->dwfl, NULL, NULL);
	return u;
}

const char *usyms_find(struct usyms *u, uint64_t addr, const char **object)
{
	Dwfl_Module *m = u ? dwfl_addrmodule(u->dwfl, (Dwarf_Addr)addr) : NULL;
	const char *name, *slash;

	*object = NULL;
	if (!m)
		return NULL;
	name = dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	slash = name ? strrchr(name, '/') : NULL;
	*object = slash ? slash + 1 : name ? name : "[unknown]";
	return dwfl_module_addrname(m, (GElf_Addr)addr);
}

void usyms_close(struct usyms *u)
{
	if (!u)
		return;
	dwfl_end(u->dwfl);
	free(u);
}

#endif /* HAVE_LIBDW */
