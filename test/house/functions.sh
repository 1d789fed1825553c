#!/usr/bin/env bash
# No function in ring/ is longer than 70 lines (TigerBeetle's rule, issue 27):
# a function a reader cannot see whole on one screen hides its structure.
# Counted as the lines strictly between a definition's "{" and "}" at
# column 0, comments and blank lines included.
# Usage: test/house/functions.sh [ROOT] [MAX]
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
max=${2:-70}
cd "$root" || exit 2
shopt -s nullglob
files=(ring/*/*.c)
[ ${#files[@]} -gt 0 ] || { echo "functions: no sources under ring/*/" >&2; exit 2; }
awk -v max="$max" '
	FNR == 1 { sig = ""; open = 0 }
	/^[A-Za-z_].*\(/ && !open { sig = $0 }
	/^\{$/ && !open { open = FNR; name = sig; next }
	/^\}/ && open {
		n = FNR - open - 1
		if (match(name, /[A-Za-z_][A-Za-z_0-9]*\(/))
			name = substr(name, RSTART, RLENGTH - 1)
		count++
		if (n > max) { printf "functions: %s:%d: %s is %d lines (at most %d)\n", FILENAME, open, name, n, max; bad++ }
		if (n > longest) { longest = n; lname = FILENAME ": " name }
		open = 0
	}
	END {
		if (bad) exit 1
		printf "functions: %d functions in ring/, none over %d lines (the longest: %s, %d)\n", count, max, lname, longest
	}' "${files[@]}"
