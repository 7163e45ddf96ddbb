// SPDX-License-Identifier: MIT
/* Network addresses between hosts (netaddr.h): parse, print, compare. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "ipclab/netaddr.h"
#include "ipclab/util.h"

static int copy_part(char *dst, size_t dl, const char *src, size_t n)
{
	if (n >= dl)
		return -EINVAL;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

int net_split(const char *text, char *host, size_t hl, char *port, size_t pl)
{
	const char *colon = strchr(text, ':');

	port[0] = '\0';
	if (text[0] == '[') {
		const char *end = strchr(text, ']');

		if (!end || copy_part(host, hl, text + 1, (size_t)(end - text - 1)))
			return -EINVAL;
		if (!end[1])
			return 0;
		return end[1] == ':' && end[2] ? copy_part(port, pl, end + 2, strlen(end + 2)) :
						 -EINVAL;
	}
	if (colon && strchr(colon + 1, ':'))	/* a bare IPv6 address */
		return copy_part(host, hl, text, strlen(text));
	if (!colon)
		return copy_part(host, hl, text, strlen(text));
	if (!colon[1] || copy_part(host, hl, text, (size_t)(colon - text)))
		return -EINVAL;
	return copy_part(port, pl, colon + 1, strlen(colon + 1));
}

static const char *net_forms(enum net_port_rule rule)
{
	return rule == NET_NO_PORT ? "an IPv4 or IPv6 address (e.g. 192.0.2.1, fd00::1)" :
	       rule == NET_PORT ? "IPV4:PORT or [IPV6]:PORT (e.g. 192.0.2.1:7227, [fd00::1]:7227)" :
				  "IPV4[:PORT] or IPV6 or [IPV6]:PORT (e.g. 0.0.0.0:7227, [::]:7227)";
}

int net_parse(const char *what, const char *text, enum net_port_rule rule, uint16_t def_port,
	      struct sockaddr_storage *ss, socklen_t *len, char *why, size_t wl)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST, .ai_family = AF_INET6,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	char host[NET_ADDR_TEXT], port[16];
	uint64_t p = def_port;

	memset(ss, 0, sizeof(*ss));
	if (net_split(text, host, sizeof(host), port, sizeof(port)) || !host[0])
		return errf(why, wl, EINVAL, "%s '%s': expected %s", what, text, net_forms(rule));
	if ((rule == NET_NO_PORT && port[0]) || (rule == NET_PORT && !port[0]))
		return errf(why, wl, EINVAL, "%s '%s': expected %s", what, text, net_forms(rule));
	if (port[0] && (parse_u64(port, &p) || p > 65535 || (rule == NET_PORT && p == 0)))
		return errf(why, wl, EINVAL, "%s '%s': port '%s' out of range %d-65535", what, text,
			    port, rule == NET_PORT);
	/* IPv4 as inet_pton reads it (four decimal parts, nothing legacy);
	 * IPv6 through getaddrinfo, which also reads a %scope */
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		ss->ss_family = AF_INET;
	} else if (!strchr(host, ':') || getaddrinfo(host, NULL, &hints, &ai) || !ai ||
		   ai->ai_family != AF_INET6 || ai->ai_addrlen > sizeof(*ss)) {
		if (ai)
			freeaddrinfo(ai);
		return errf(why, wl, EINVAL, "%s '%s': '%s' is not an IPv4 or IPv6 address; expected %s",
			    what, text, host, net_forms(rule));
	} else {
		memcpy(ss, ai->ai_addr, ai->ai_addrlen);
		freeaddrinfo(ai);
	}
	net_set_port(ss, (uint16_t)p);
	if (len)
		*len = net_len(ss);
	return 0;
}

socklen_t net_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

uint16_t net_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

void net_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons(port);
}

void net_format(const struct sockaddr_storage *ss, bool with_port, char *buf, size_t len)
{
	char host[NET_ADDR_TEXT] = "?";
	int v6 = ss->ss_family == AF_INET6;

	/* numeric, with a link-local address's %scope */
	getnameinfo((const struct sockaddr *)ss, net_len(ss), host, sizeof(host), NULL, 0,
		    NI_NUMERICHOST);
	if (!with_port)
		snprintf(buf, len, "%s", host);
	else
		snprintf(buf, len, v6 ? "[%s]:%u" : "%s:%u", host, net_port(ss));
}

bool net_same(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
	}
	const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

	return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
}

void net_unmap(struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *s6 = (const void *)ss;
	struct sockaddr_in s4 = { .sin_family = AF_INET };

	if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		return;
	s4.sin_port = s6->sin6_port;
	memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], sizeof(s4.sin_addr));
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, &s4, sizeof(s4));
}
