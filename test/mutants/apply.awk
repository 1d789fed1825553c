# Applies one mutant to a source file: awk -f apply.awk NAME.mut node.c > out.
# The mutant holds one or more "--- ORIGINAL" / "--- REPLACEMENT" blocks, each
# ended by the next marker or "--- END". Blocks are applied in order; each
# ORIGINAL (its lines joined by newlines, byte for byte) must occur exactly
# once in the text as it stands. Exit 3 when one does not (stale: stderr says
# how often it was found), 4 when the mutant file is malformed.
# Plain POSIX awk (Debian's mawk): index() matches literally.

BEGIN {
	npair = 0
	blk = ""
	bad = ""
}

FNR == NR {
	if ($0 == "--- ORIGINAL") {
		npair++
		blk = "o"
		orig[npair] = ""
		no[npair] = 0
		hasr[npair] = 0
		next
	}
	if ($0 == "--- REPLACEMENT") {
		if (blk != "o" && bad == "")
			bad = "a REPLACEMENT block without an ORIGINAL before it"
		blk = "r"
		repl[npair] = ""
		nr[npair] = 0
		hasr[npair] = 1
		next
	}
	if ($0 == "--- END") {
		blk = ""
		next
	}
	if (blk == "o") {
		orig[npair] = (no[npair]++ ? orig[npair] "\n" : "") $0
		next
	}
	if (blk == "r") {
		repl[npair] = (nr[npair]++ ? repl[npair] "\n" : "") $0
		next
	}
	next
}

{
	src = src $0 "\n"
}

END {
	if (bad == "" && npair == 0)
		bad = "no ORIGINAL block"
	for (k = 1; bad == "" && k <= npair; k++) {
		if (orig[k] == "")
			bad = "ORIGINAL block " k " is empty"
		else if (!hasr[k])
			bad = "ORIGINAL block " k " has no REPLACEMENT"
	}
	if (bad != "") {
		printf("malformed: %s\n", bad) > "/dev/stderr"
		exit 4
	}
	for (k = 1; k <= npair; k++) {
		n = 0
		at = 0
		p = 1
		rest = src
		len = length(orig[k])
		while (n < 10) {
			j = index(rest, orig[k])
			if (j == 0)
				break
			n++
			if (n == 1)
				at = p + j - 1
			rest = substr(rest, j + len)
			p = p + j - 1 + len
		}
		if (n != 1) {
			if (npair > 1)
				printf("block %d of %d: ", k, npair) > "/dev/stderr"
			printf("ORIGINAL found %s times\n", n >= 10 ? "10 or more" : n) > "/dev/stderr"
			exit 3
		}
		src = substr(src, 1, at - 1) repl[k] substr(src, at + len)
	}
	printf("%s", src)
}
