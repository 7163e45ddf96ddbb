/* SPDX-License-Identifier: MIT */
/* Network addresses between hosts (ipclab serve, run --peer, and the
 * transports that cross a network): IPv4 or IPv6 in a sockaddr_storage,
 * written as ADDR, ADDR:PORT, IPV6 or [IPV6]:PORT. Numeric only where an
 * address is an option's value; --peer also takes a host name. */
#ifndef IPCLAB_NETADDR_H
#define IPCLAB_NETADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* The longest "[IPV6%SCOPE]:PORT" and its NUL. */
#define NET_ADDR_TEXT 80

/* What text names: host and port split apart (port "" when there is none).
 * "[H]" and "[H]:P" are IPv6 with brackets; a text with two colons or more
 * and no brackets is a bare IPv6 address; "H:P" and "H" otherwise. 0, or
 * -EINVAL when it is none of these or a part does not fit. */
int net_split(const char *text, char *host, size_t hl, char *port, size_t pl);

enum net_port_rule {
	NET_NO_PORT,		/* an address alone */
	NET_PORT,		/* ADDR:PORT, the port 1-65535 */
	NET_PORT_ANY,		/* a port 0-65535, or none (def_port) */
};

/* A numeric IPv4 or IPv6 address (with a %scope for link-local ones),
 * port as rule says. 0, or -EINVAL with why naming the part that is wrong
 * and the forms that are right. */
int net_parse(const char *what, const char *text, enum net_port_rule rule, uint16_t def_port,
	      struct sockaddr_storage *ss, socklen_t *len, char *why, size_t wl);

/* "1.2.3.4" / "fd00::1" (with_port false), "1.2.3.4:P" / "[fd00::1]:P". */
void net_format(const struct sockaddr_storage *ss, bool with_port, char *buf, size_t len);
uint16_t net_port(const struct sockaddr_storage *ss);
void net_set_port(struct sockaddr_storage *ss, uint16_t port);
socklen_t net_len(const struct sockaddr_storage *ss);
/* Same family, address and port. */
bool net_same(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
/* An IPv4-mapped IPv6 address (::ffff:a.b.c.d, a dual-stack listener's
 * view of an IPv4 peer) as the plain IPv4 one. */
void net_unmap(struct sockaddr_storage *ss);

#endif
