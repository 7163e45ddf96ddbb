# SPDX-License-Identifier: MIT
# `make deps`: install missing Debian build dependencies (apt-get, as root),
# or say exactly what to install.

DEB_PKGS := build-essential pkg-config libjansson-dev libcmocka-dev libqb-dev gnuplot-nox libbpf-dev clang libzmq3-dev libnng-dev liburing-dev libsystemd-dev dbus-daemon libdw-dev libelf-dev spin libsqlite3-dev libpq-dev postgresql sqlite3 chromium ansible-core openssh-server openssh-client ccache

deps:
	@missing=""; for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "deps: installing$$missing"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; } >/dev/null || \
		{ echo "deps: apt-get install$$missing failed" >&2; exit 1; }; \
	else \
		echo "deps: missing Debian packages:$$missing; install them with: sudo apt-get install$$missing" >&2; exit 1; \
	fi
