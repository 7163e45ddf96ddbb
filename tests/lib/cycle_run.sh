# SPDX-License-Identifier: MIT
# Sourced by the -p cycle tests (after common.sh, with $dir their temporary
# directory): run_json NAME args... runs one cycle cell, its JSON into
# $dir/NAME.json and its stderr into $dir/NAME.err; exit status 0 expected.
run_json() {
	local name=$1
	shift
	"$IPCLAB" run -p cycle -q -f json -o "$dir/$name.json" "$@" 2>"$dir/$name.err"
	local rc=$?
	[ $rc = 0 ] || fail "$name: exit $rc: $(head -3 "$dir/$name.err")"
	return $rc
}
