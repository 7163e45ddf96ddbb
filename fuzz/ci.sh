#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make fuzz-ci`: run each libFuzzer binary for FUZZ_SECONDS over its corpus
# and print one line each: executions, corpus growth, findings. New inputs
# go to BUILD/corpus/NAME (the repository's corpus is only read); a crash,
# leak, timeout or out-of-memory is saved under BUILD/artifacts/NAME/ and
# fails the run. Keep a finding as a regression test by copying the file
# into fuzz/corpus/NAME/ once it is fixed (make check replays that folder).
# Usage: fuzz/ci.sh BUILD NAME...
set -u
b=$1
shift
secs=${FUZZ_SECONDS:-60}
cd "$(dirname "$0")/.."

run_one() {
	local name=$1 bin=$b/fuzz/bin/$1 out=$b/corpus/$1 art=$b/artifacts/$1/ extra=()
	mkdir -p "$out" "$art"
	# the parsers print one usage error per refused input: keep it quiet
	[ "$name" = parse ] && extra=(-close_fd_mask=2)
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$art" "${extra[@]}" "$out" "fuzz/corpus/$name" >"$b/$name.log" 2>&1
	echo $? >"$b/$name.rc"
}

start=$(date +%s)
for name in "$@"; do
	[ -x "$b/fuzz/bin/$name" ] || { echo "fuzz-ci: $b/fuzz/bin/$name not built (make fuzz)"; exit 1; }
	if [ "${FUZZ_PARALLEL:-1}" = 1 ]; then
		run_one "$name" &
	else
		run_one "$name"
	fi
done
wait

fails=0 total=0
for name in "$@"; do
	log=$b/$name.log
	rc=$(cat "$b/$name.rc")
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	new=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	found=$(ls -1 "$b/artifacts/$name/" 2>/dev/null | wc -l)
	total=$((total + ${execs:-0}))
	printf 'fuzz %-16s %s s: %s executions, %s, %s new inputs, %s findings, exit %s\n' \
		"$name" "$secs" "${execs:-?}" "${cov:-cov: ?}" "${new:-?}" "$found" "$rc"
	if [ "$rc" != 0 ] || [ "$found" != 0 ]; then
		fails=$((fails + 1))
		grep -E 'ERROR|SUMMARY|==[0-9]+==' "$log" | head -20 | sed 's/^/    | /'
		for a in "$b/artifacts/$name"/*; do
			[ -f "$a" ] || continue
			# the input itself, so a finding seen only in a CI log can be rebuilt
			echo "    artifact: $a ($(stat -c %s "$a") bytes, base64: $(head -c 3000 "$a" | base64 -w0))"
		done
		echo "    reproduce: $b/fuzz/bin/$name ARTIFACT (or build/tests/fuzz-replay-$name ARTIFACT)"
	fi
done
echo "fuzz: $total executions in $(( $(date +%s) - start )) s, $fails fuzzers with findings"
[ $fails = 0 ]
