// SPDX-License-Identifier: MIT
/* The latency kinds' names: THE table of what "lat_kind" says in the
 * result record, the text table and the figures. */
#include <string.h>

#include "ipclab/metrics.h"
#include "ipclab/util.h"

static const struct {
	const char *key;	/* JSON, CSV */
	const char *text;	/* the text table's column */
	const char *title;	/* a figure of its latencies */
} kinds[] = {
	[LAT_NONE] = { "", "", "latency" },
	[LAT_RTT] = { "rtt", "RTT", "round-trip latency" },
	[LAT_ONE_WAY] = { "one_way", "1-way", "one-way latency" },
	[LAT_PERIOD] = { "cycle", "cycle", "cycle latency" },
};

static unsigned kind_index(enum lat_kind k)
{
	return (unsigned)k < ARRAY_SIZE(kinds) ? (unsigned)k : LAT_NONE;
}

const char *lat_kind_key(enum lat_kind k)
{
	return kinds[kind_index(k)].key;
}

const char *lat_kind_text(enum lat_kind k)
{
	return kinds[kind_index(k)].text;
}

const char *lat_kind_title(enum lat_kind k)
{
	return kinds[kind_index(k)].title;
}

enum lat_kind lat_kind_parse(const char *key)
{
	for (unsigned i = LAT_NONE + 1; key && i < ARRAY_SIZE(kinds); i++)
		if (strcmp(key, kinds[i].key) == 0)
			return (enum lat_kind)i;
	return LAT_NONE;
}
