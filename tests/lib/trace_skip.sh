# SPDX-License-Identifier: MIT
# Sourced by the --trace tests: exit 77 (skip) with the reason where --trace
# cannot run here: no kernel BTF, not root, or a build without libbpf.
IPCLAB=${IPCLAB:?}
[ -r /sys/kernel/btf/vmlinux ] || { echo "skip: no kernel BTF (/sys/kernel/btf/vmlinux)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "skip: --trace needs root here"; exit 77; }
trace_skip_out=$(mktemp)
trace_skip_err=$("$IPCLAB" run -t null -n 10 --trace -f json -o "$trace_skip_out" 2>&1)
rm -f "$trace_skip_out"
case $trace_skip_err in *libbpf*) echo "skip: $trace_skip_err"; exit 77 ;; esac
