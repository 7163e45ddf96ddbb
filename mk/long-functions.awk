# SPDX-License-Identifier: MIT
# Functions longer than MAX lines (default 60, from the first line of the
# signature to the closing brace) in kernel-style C: a body opens with "{"
# alone at the start of a line and closes with "}" at the start of a line.
# Prints "FILE:LINE: NAME: N lines" for those without a comment directly
# above the signature (the line before it, or before its attribute line,
# ends a comment); with ALL=1, every long function, "(commented)" marked.
# Usage: awk -f mk/long-functions.awk [-v MAX=60] [-v ALL=1] FILES...
BEGIN { if (MAX == "") MAX = 60 }
FNR == 1 { sig = 0; body = 0; prev = ""; above = "" }
{
	if (body) {
		if ($0 ~ /^}/) {
			n = FNR - sig + 1
			commented = above ~ /\*\/[ \t]*$/ || above ~ /^[ \t]*\/\//
			if (n > MAX && (ALL || !commented))
				printf "%s:%d: %s: %d lines%s\n", FILENAME, sig, name, n,
				       commented ? " (commented)" : ""
			body = 0; sig = 0
		}
		prev = $0
		next
	}
	if (sig && $0 == "{") {
		body = 1
		prev = $0
		next
	}
	if (sig && ($0 ~ /;[ \t]*$/ || $0 ~ /^$/ || $0 ~ /^#/))
		sig = 0		# a declaration, not a definition
	if (!sig && $0 ~ /^[A-Za-z_][A-Za-z0-9_ \t\*,]*[ \t\*]+\**[A-Za-z_][A-Za-z0-9_]*\(/ &&
	    $0 !~ /^(typedef|struct [A-Za-z0-9_]+ \{|enum|union)/) {
		sig = FNR
		name = $0
		sub(/\(.*/, "", name)
		sub(/.*[ \t\*]/, "", name)
		above = prev
		# an attribute line of its own (IPCRING_MUST_CHECK and the like)
		if (prev ~ /^[A-Z_][A-Z0-9_]*(\(.*\))?[ \t]*$/)
			above = prev2
	}
	prev2 = prev
	prev = $0
}
