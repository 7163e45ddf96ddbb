#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test-timeout: 1500
# deploy/ansible against two test hosts made here: each a network, UTS and
# mount namespace of its own with its own hostname (fleet-a, fleet-b) and
# its own sshd, reached over veth from this test's own network namespace,
# where a PostgreSQL server (password authentication) takes every host's
# results. Asserts: site.yml builds, runs and stores on both hosts with
# their machine labels and one fleet_run, fetches the files, does not
# rebuild the same source; history and compare by machine; pairs.yml runs
# a pair across the hosts and stops serve; the store's password is never
# in any process's argv during the plays (sampled each 50 ms by a sampler
# that first shows it sees a process with it), nor in a record; an unreachable
# host, a store that is down, a wrong password and a missing package are
# each reported, the other hosts unharmed. Every namespace, sshd and
# server it started is gone at the end.
. "$(dirname "$0")/../lib/common.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)

[ "$(id -u)" = 0 ] || { echo "skip: needs root (namespaces, sshd)"; exit 77; }
for c in ansible-playbook /usr/sbin/sshd ssh-keygen ssh unshare nsenter ip; do
	command -v "$c" >/dev/null || {
		echo "skip: no $c; install with: apt-get install ansible-core openssh-server openssh-client iproute2"
		exit 77
	}
done
# everything in a network namespace of the test's own: the hosts' links
# and the store's addresses exist only there
if [ -z "${FLEET_NETNS:-}" ]; then
	export FLEET_NETNS=1
	exec unshare --net bash "$0" "$@"
fi
ip link set lo up

W=$TMPDIR/fleet
mkdir -p "$W/ssh" "$W/home" "$W/fetch" && chmod 700 "$W"
pids=()
cleanup() {
	local p n h
	# whatever runs in a host's namespaces (a serve a stopped play left
	# behind, its sessions) ends with it
	for p in /proc/[0-9]*; do
		n=$(readlink "$p/ns/net" 2>/dev/null) || continue
		for h in ${host_net[@]+"${host_net[@]}"}; do
			[ "$n" = "$h" ] && kill -KILL "${p#/proc/}" 2>/dev/null
		done
	done
	# the ssh connection masters of the plays (ControlPersist) end here
	pkill -f "$W/cp/" 2>/dev/null
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	pg_stop
}
. "$(dirname "$0")/../lib/pg.sh"
trap cleanup EXIT

ssh-keygen -q -t ed25519 -N '' -f "$W/ssh/id" -C ipclab-fleet-test
cp "$W/ssh/id.pub" "$W/ssh/authorized_keys"

# host NAME N: a host at 10.201.N.2, this namespace at 10.201.N.1
declare -A host_pid=() host_net=()
host() {
	local name=$1 n=$2 d=$W/host-$1 pid
	mkdir -p "$d"
	ssh-keygen -q -t ed25519 -N '' -f "$d/hostkey"
	cat >"$d/sshd_config" <<EOF
ListenAddress 0.0.0.0
HostKey $d/hostkey
AuthorizedKeysFile $W/ssh/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
Subsystem sftp internal-sftp
EOF
	# its own /run (sshd's privilege separation directory), hostname, network
	# and root's home: an empty one under the test's directory, as on a fresh
	# host (Ansible's remote files go there, not into this machine's /root,
	# and no login script of this machine runs at each ssh command: one
	# that starts a Python version manager cost the test a third of its CPU)
	# --kill-child: the sshd goes with unshare, which cleanup stops
	mkdir -m 700 "$d/home"
	home=$(getent passwd root | cut -d: -f6)
	[ -d "$home" ] || { echo "FAIL: root's home '$home' is not a directory"; exit 1; }
	unshare --net --uts --mount --propagation private --fork --kill-child=TERM sh -c \
		"hostname $name && mount -t tmpfs -o mode=755 ipclab-fleet /run && mkdir -m 755 /run/sshd &&
		 mount --bind $d/home $home && exec /usr/sbin/sshd -D -e -f $d/sshd_config" >"$d/sshd.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	host_pid[$name]=$pid
	# its namespaces exist once unshare has made them: then the link moves in
	for _ in $(seq 500); do
		[ "$(readlink "/proc/$pid/ns/net")" != "$(readlink /proc/$$/ns/net)" ] && break
		sleep 0.01
	done
	host_net[$name]=$(readlink "/proc/$pid/ns/net")
	ip link add "fa$n" type veth peer name "fh$n"
	ip link set "fh$n" netns "$pid"
	ip addr add "10.201.$n.1/24" dev "fa$n"
	ip link set "fa$n" up
	nsenter -t "$pid" -n sh -c "ip link set lo up && ip addr add 10.201.$n.2/24 dev fh$n && ip link set fh$n up"
}
host fleet-a 1
host fleet-b 2
# a link between the two hosts, for the pair
ip link add fab0 type veth peer name fab1
ip link set fab0 netns "${host_pid[fleet-a]}"
ip link set fab1 netns "${host_pid[fleet-b]}"
nsenter -t "${host_pid[fleet-a]}" -n sh -c "ip addr add 10.201.3.1/24 dev fab0 && ip link set fab0 up"
nsenter -t "${host_pid[fleet-b]}" -n sh -c "ip addr add 10.201.3.2/24 dev fab1 && ip link set fab1 up"

# the store: password authentication over TCP from the hosts
pw='fl:e\et@p#w/d?'"$RANDOM"
PG_EXTRA="-c fsync=off -c listen_addresses=10.201.1.1,10.201.2.1" pg_start
trap cleanup EXIT
printf 'local all all trust\nhost all all 10.201.0.0/16 scram-sha-256\n' >"$PG_DIR/data/pg_hba.conf"
pg_sql "ALTER ROLE ipclab PASSWORD '$pw'" >/dev/null
pg_sql "SELECT pg_reload_conf()" >/dev/null

cat >"$W/ansible.cfg" <<EOF
[defaults]
host_key_checking = False
remote_tmp = $W/remote-tmp
local_tmp = $W/local-tmp
roles_path = $src/deploy/ansible/roles
forks = 5
timeout = 10
interpreter_python = /usr/bin/python3
nocows = 1
retry_files_enabled = False
[ssh_connection]
ssh_args = -o ControlMaster=auto -o ControlPersist=30s -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR
control_path_dir = $W/cp
pipelining = True
EOF
# inventory: the hosts; extra ones for the bad-input cases
inv() {
	cat <<EOF
[ipclab_hosts]
fleet-a ansible_host=10.201.1.2 ipclab_dir=$W/host-fleet-a/opt ipclab_db_url=postgresql://ipclab@10.201.1.1:$PG_PORT/postgres
fleet-b ansible_host=10.201.2.2 ipclab_dir=$W/host-fleet-b/opt ipclab_db_url=postgresql://ipclab@10.201.2.1:$PG_PORT/postgres
$*
[all:vars]
ansible_user=root
ansible_ssh_private_key_file=$W/ssh/id
EOF
}
inv >"$W/inventory.ini"
# the password as Ansible takes a vault value: from a file, never argv
printf 'ipclab_db_password: "%s"\n' "$(printf '%s' "$pw" | sed 's/\\/\\\\/g')" >"$W/secret.yml"
chmod 600 "$W/secret.yml"

# every play fetches (and packs the source) under the test's directory and
# builds without optimisation (ipclab_make_env: the role's build is what is
# tested, not the compiler's optimiser; about a third less CPU). With
# ccache, through a cache the two hosts share (they are namespaces of this
# machine, on one file system): each host still unpacks and builds through
# the role, the second one from the objects the first one's build left
# there (the first site.yml runs them one at a time, ipclab_exclusive).
# Depend mode: a miss runs no preprocessor besides the compiler; the
# hosts' own directories are left out of what is hashed.
make_env='"CFLAGS": "-O0"'
if command -v ccache >/dev/null; then
	make_env+=', "CC": "ccache cc", "CCACHE_DIR": "'$W/ccache'", "CCACHE_BASEDIR": "'$W'"'
	make_env+=', "CCACHE_NOHASHDIR": "1", "CCACHE_DEPEND": "1"'
else
	echo "note: no ccache (apt-get install ccache): each host builds in full"
fi
play() {
	env HOME="$W/home" ANSIBLE_CONFIG="$W/ansible.cfg" ANSIBLE_NOCOLOR=1 \
		ansible-playbook -e ipclab_fetch_dir="$W/fetch" -e "{\"ipclab_make_env\": {$make_env}}" "$@"
}

# every host answers (sshd up): a bounded wait on the real condition
for h in fleet-a fleet-b; do
	ok=0
	for _ in $(seq 100); do
		if ssh -F /dev/null -i "$W/ssh/id" -o BatchMode=yes -o UserKnownHostsFile=/dev/null \
			-o StrictHostKeyChecking=no -o LogLevel=ERROR -o ConnectTimeout=2 \
			"root@10.201.$([ $h = fleet-a ] && echo 1 || echo 2).2" hostname 2>/dev/null | grep -qx "$h"; then
			ok=1
			break
		fi
		sleep 0.1
	done
	[ "$ok" = 1 ] || { echo "FAIL: $h's sshd did not answer: $(tail -3 "$W/host-$h/sshd.log")"; exit 1; }
done

# A sampler of every process's argv while the plays run: the password
# must never be there. One Python process reads every /proc/PID/cmdline
# each 50 ms (a shell loop starting two programs per process took seconds
# a sweep and most of a CPU; a sweep of 120 processes is about 2 ms of CPU
# with os.read, 3 with Python's files: at 20 ms with files it took 0.15 of
# a CPU all through the test, at 50 ms with os.read 0.05); it reads the
# password from a file, so its own argv does not hold it, and says at the
# end how many sweeps it made at what CPU cost.
printf '%s' "$pw" >"$W/pw" && chmod 600 "$W/pw"
: >"$W/argv-hits"
python3 - "$W/pw" "$W/argv-hits" "$W/argv-stop" <<'EOF_PY' &
import os, sys, time
pw = open(sys.argv[1], "rb").read()
hits, stop = sys.argv[2], sys.argv[3]
sweeps = 0
while not os.path.exists(stop):
    for pid in os.listdir(b"/proc"):
        if not pid.isdigit():
            continue
        argv = b""
        try:
            fd = os.open(b"/proc/" + pid + b"/cmdline", os.O_RDONLY)
            try:
                while True:
                    part = os.read(fd, 65536)
                    if not part:
                        break
                    argv += part
            finally:
                os.close(fd)
        except OSError:
            continue
        if pw in argv:
            with open(hits, "a") as f:
                f.write("/proc/%s/cmdline: %s\n" % (pid.decode(), argv.replace(b"\0", b" ").decode(errors="replace")))
    sweeps += 1
    time.sleep(0.05)
t = os.times()
print("argv sampler: %d sweeps, %.1f CPU s" % (sweeps, t.user + t.system))
EOF_PY
watcher=$!
pids+=("$watcher")
# it sees a process with the password in its argv: one that lives until
# seen (60 s at most: python's start under load); its line is left out of
# the check at the end
bash -c 'exec -a "$0" sleep 60' "canary-$pw" &
canary=$!
for _ in $(seq 600); do grep -q "canary-" "$W/argv-hits" && break; sleep 0.1; done
kill "$canary" 2>/dev/null
wait "$canary" 2>/dev/null
grep -q "canary-" "$W/argv-hits" || {
	echo "FAIL: the argv sampler did not see a process with the password in 60 s ($(kill -0 "$watcher" 2>/dev/null && echo running || echo "it is not running"))"
	exit 1
}

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
db_url_local="postgresql://ipclab@/postgres?host=$PG_DIR&port=$PG_PORT"

# ---- site.yml on both hosts -------------------------------------------------
play -i "$W/inventory.ini" "$src/deploy/ansible/site.yml" -e "@$W/secret.yml" -e ipclab_exclusive=true \
	-e ipclab_fetch_dir="$W/fetch" -e "ipclab_args='-t pipe -p pingpong -s 64 -n 2000'" \
	-e '{"ipclab_labels": {"patch": "v2"}}' >"$W/site1.log" 2>&1
rc=$?
[ "$rc" = 0 ] || { fail "site.yml: rc $rc"; tail -30 "$W/site1.log"; }
fleet=$(sed -n 's/.*fleet_run=\([0-9TZ-]*\):.*/\1/p' "$W/site1.log" | head -1)
[ -n "$fleet" ] || fail "site.yml said no fleet_run"
"$IPCLAB" db ls --db "$db_url_local" --label "fleet_run=$fleet" -f json >"$W/ls.json" 2>"$W/ls.err" ||
	fail "db ls: $(cat "$W/ls.err")"
machines=$(python3 -c 'import json,sys; print(" ".join(sorted(r["machine"] for r in json.load(open(sys.argv[1])))))' "$W/ls.json" 2>&1)
[ "$machines" = "fleet-a fleet-b" ] || fail "stored runs of fleet $fleet on: '$machines', not 'fleet-a fleet-b'"
python3 - "$W/ls.json" <<'EOF' || fail "labels of the stored runs"
import json, sys
runs = json.load(open(sys.argv[1]))
for r in runs:
    l = r.get("labels", {})
    assert l.get("patch") == "v2", l
    assert l.get("kernel"), l
EOF
for h in fleet-a fleet-b; do
	for ext in json html; do
		[ -s "$W/fetch/$h/$fleet.$ext" ] || fail "not fetched: $h/$fleet.$ext"
	done
	grep -q '"fleet_run"' "$W/fetch/$h/$fleet.json" 2>/dev/null || true
done
[ -e "$W/host-fleet-a/opt/results/.pgpass-$fleet" ] && fail "the pass file was left on fleet-a"
# what the second host's build found in the cache (said, not asserted: a
# miss costs CPU, not correctness)
[ -d "$W/ccache" ] && echo "ccache over the two hosts' builds: $(CCACHE_DIR="$W/ccache" ccache --print-stats 2>/dev/null |
	awk -F'\t' '$1 == "direct_cache_hit" {h = $2} $1 == "cache_miss" {m = $2} END {print h + 0 " hits, " m + 0 " misses"}')"

# the same source again, with a third host that is unreachable: no
# rebuild on either host; fleet-c reported, fleet-a and fleet-b still run
# and store
inv "fleet-c ansible_host=10.201.1.99 ipclab_dir=$W/host-fleet-c/opt" >"$W/inv-c.ini"
play -i "$W/inv-c.ini" "$src/deploy/ansible/site.yml" -e "@$W/secret.yml" \
	-e "ipclab_args='-t pipe -p pingpong -s 64 -n 1000'" >"$W/site2.log" 2>&1
rc=$?
[ "$rc" != 0 ] || fail "a play with an unreachable host exited 0"
grep -q 'fleet-c.*UNREACHABLE' "$W/site2.log" || fail "the unreachable host was not reported"
for h in fleet-a fleet-b; do
	grep -Eq "^$h +: .* unreachable=0 +failed=0 " "$W/site2.log" ||
		fail "the second play failed on $h: $(grep -E "^$h +:" "$W/site2.log")"
done
sed -n '/TASK \[ipclab : build ipclab\]/,/^TASK /p' "$W/site2.log" >"$W/site2-build.log"
grep -q '^changed' "$W/site2-build.log" && fail "the second play with the same source rebuilt"
for h in fleet-a fleet-b; do
	grep -q "^skipping: \[$h\]" "$W/site2-build.log" || fail "the second play's build step was not skipped on $h"
done
ufleet=$(sed -n 's/.*fleet_run=\([0-9TZ-]*\):.*/\1/p' "$W/site2.log" | head -1)
[ -n "$ufleet" ] && [ "$("$IPCLAB" db ls --db "$db_url_local" --label "fleet_run=$ufleet" -f json |
	python3 -c 'import json,sys; print(" ".join(sorted(r["machine"] for r in json.load(sys.stdin))))')" = "fleet-a fleet-b" ] ||
	fail "with fleet-c unreachable, fleet-a and fleet-b did not both store ($ufleet)"

# ---- hosts side by side -----------------------------------------------------------
"$IPCLAB" history --db "$db_url_local" --label "fleet_run=$fleet" --by machine -m p50 >"$W/hist.txt" 2>&1 ||
	fail "history --by machine: $(tail -3 "$W/hist.txt")"
grep -q fleet-a "$W/hist.txt" && grep -q fleet-b "$W/hist.txt" || fail "history --by machine names both hosts: $(head -20 "$W/hist.txt")"
"$IPCLAB" compare --db "$db_url_local" --label "fleet_run=$fleet" --by machine --baseline machine=fleet-a -m p50 \
	>"$W/cmp.txt" 2>&1 || fail "compare --by machine: $(tail -3 "$W/cmp.txt")"
grep -q fleet-b "$W/cmp.txt" || fail "compare --by machine names fleet-b: $(head -20 "$W/cmp.txt")"

# ---- pairs.yml: serve on fleet-a, run --peer from fleet-b -----------------------------
play -i "$W/inventory.ini" "$src/deploy/ansible/pairs.yml" -e "@$W/secret.yml" -e ipclab_server=fleet-a \
	-e ipclab_server_address=10.201.3.1 -e ipclab_fetch_dir="$W/fetch" \
	-e "ipclab_pair_args='-t tcp -p pingpong -s 64 -n 2000'" >"$W/pairs.log" 2>&1 ||
	{ fail "pairs.yml"; tail -30 "$W/pairs.log"; }
pfleet=$(sed -n 's/.*fleet_run=\([0-9TZ-]*\):.*/\1/p' "$W/pairs.log" | head -1)
"$IPCLAB" db ls --db "$db_url_local" --label "fleet_run=$pfleet" --label pair_server=fleet-a -f json >"$W/pls.json" 2>&1 ||
	fail "db ls of the pair"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert [x["machine"] for x in r] == ["fleet-b"], r' "$W/pls.json" ||
	fail "the pair's run is stored from fleet-b: $(cat "$W/pls.json")"
pgrep -f "ipclab serve .*--token-file $W/host-fleet-a/" >/dev/null &&
	fail "ipclab serve still runs on fleet-a after pairs.yml"
ls "$W"/host-fleet-*/opt/.token-* 2>/dev/null && fail "a token file was left behind"

# ---- bad input -------------------------------------------------------------------------
# (an unreachable host: the second site.yml above)
# a wrong password on fleet-a, a store that is down for fleet-b, in one
# play: one line each, for its host, and nothing stored
before=$("$IPCLAB" db ls --db "$db_url_local" -f json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
inv >"$W/inv-bad.ini"
sed -i -e "s|^fleet-a .*|& ipclab_db_password=not-it|" \
	-e "s|^\(fleet-b .*ipclab_db_url=\)[^ ]*|\1postgresql://ipclab@10.201.2.1:1/postgres|" "$W/inv-bad.ini"
play -i "$W/inv-bad.ini" "$src/deploy/ansible/site.yml" \
	-e "ipclab_args='-t pipe -p pingpong -s 64 -n 1000'" >"$W/bad.log" 2>&1 &&
	fail "a play with a wrong password and a store that is down exited 0"
grep '^fatal: \[fleet-b\]' "$W/bad.log" | grep -qi 'connect\|refused\|store' ||
	fail "the store being down was not said for fleet-b: $(grep -i fatal "$W/bad.log" | head -3)"
grep '^fatal: \[fleet-a\]' "$W/bad.log" | grep -qi 'password' ||
	fail "a wrong password was not said for fleet-a: $(grep -i fatal "$W/bad.log" | head -3)"
after=$("$IPCLAB" db ls --db "$db_url_local" -f json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[ "$before" = "$after" ] || fail "runs stored by the failed plays: $before then $after"
# a missing package, not to be installed: said by name
play -i "$W/inventory.ini" "$src/deploy/ansible/site.yml" -l fleet-a,localhost -e ipclab_install_deps=false \
	-e '{"ipclab_packages": ["libjansson-dev", "ipclab-no-such-package"]}' >"$W/deps.log" 2>&1 &&
	fail "a play with a missing package exited 0"
grep -q 'lacks.*ipclab-no-such-package' "$W/deps.log" || fail "the missing package was not named: $(grep -i fatal "$W/deps.log" | head -3)"

# ---- the password: never in argv, never in a record -------------------------------------
touch "$W/argv-stop"
wait "$watcher"
grep -v "canary-" "$W/argv-hits" >"$W/argv-leaks"
[ -s "$W/argv-leaks" ] && fail "the password was in a process's argv: $(head -3 "$W/argv-leaks")"
grep -rlF -- "$pw" "$W/fetch" "$W"/*.log && fail "the password is in a fetched file or the play's output"
"$IPCLAB" db export --db "$db_url_local" --label "fleet_run=$fleet" --dir "$W/export" >/dev/null 2>&1
grep -rlF -- "$pw" "$W/export" && fail "the password is in a stored record"

# FLEET_LOGS=DIR keeps the plays' logs of a failed run there
[ "$fails" = 0 ] || [ -z "${FLEET_LOGS:-}" ] || cp "$W"/*.log "$FLEET_LOGS"/ 2>/dev/null
[ "$fails" = 0 ] && echo "ok: fleet $fleet on fleet-a and fleet-b, pair $pfleet"
exit "$fails"
