#!/usr/bin/env bash
# make model / make model-check: the SPIN checks of test/model/ring.pml
# (docs/model.md). Each configuration is compiled with its bounds and
# searched; a line per configuration gives states stored, transitions,
# memory and time. A planted bug (grants without the majority confirmation
# of PROTOCOL.md §4.4) must produce a counterexample, or the model checks
# nothing. Exit 1 on a violation, a missed planted bug, or a tool error.
#
#   test/model/run.sh quick   the exhaustive 3-member run and the planted bug (make test)
#   test/model/run.sh full    also the larger configurations (make model)
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/model
mode=${1:-quick}
command -v spin >/dev/null || { echo "model: spin is missing (make deps)" >&2; exit 1; }
mkdir -p "$out"

# name|spin -D flags|pan compile flags|pan run flags|what a pass means
configs=(
	"n3-crash|-DN=3 -DLOSSES=0 -DDUPS=0 -DSWAPS=1 -DCRASHES=1 -DMAXGEN=2 -DMAXSEQ=4|-DSAFETY -DCOLLAPSE|-m300000 -w26|exhaustive"
)
if [[ $mode == full ]]; then
	configs+=(
		"n3-loss|-DN=3 -DLOSSES=1 -DDUPS=1 -DSWAPS=1 -DCRASHES=0 -DMAXGEN=2 -DMAXSEQ=4|-DSAFETY -DBITSTATE|-m300000 -w33|bitstate (not exhaustive)"
		"n4-crash|-DN=4 -DLOSSES=0 -DDUPS=0 -DSWAPS=0 -DCRASHES=1 -DMAXGEN=2 -DMAXSEQ=4|-DSAFETY -DBITSTATE|-m300000 -w33|bitstate (not exhaustive)"
	)
fi

# check NAME MODEL DFLAGS CFLAGS RFLAGS: prints the figures, returns pan's verdict
check() {
	local name=$1 model=$2 dflags=$3 cflags=$4 rflags=$5 dir=$out/$1
	rm -rf "$dir" && mkdir -p "$dir" || return 2
	cp "$model" "$dir/ring.pml"
	# shellcheck disable=SC2086 # the flags are words
	(cd "$dir" && spin $dflags -a ring.pml >spin.log 2>&1 && cc -O2 -w $cflags -o pan pan.c >cc.log 2>&1) ||
		{ echo "model: $name does not build: $(tail -n 3 "$dir"/spin.log "$dir"/cc.log)" >&2; return 2; }
	local t0=$EPOCHREALTIME
	# shellcheck disable=SC2086
	(cd "$dir" && ./pan $rflags >pan.log 2>&1)
	local secs errors states trans mem
	secs=$(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $t0 }")
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.log" | tail -n 1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$dir/pan.log" | tail -n 1)
	trans=$(sed -n 's/^ *\([0-9.e+]*\) transitions.*/\1/p' "$dir/pan.log" | tail -n 1)
	mem=$(sed -n 's/^ *\([0-9.]*\).*total actual memory usage.*/\1/p' "$dir/pan.log" | tail -n 1)
	printf '%-10s states %12s  transitions %12s  memory %9s MB  time %7s s  errors %s\n' \
		"$name" "${states:-?}" "${trans:-?}" "${mem:-?}" "$secs" "${errors:-?}"
	[[ -n $errors ]] || return 2
	((errors == 0))
}

fail=0

# The model knows every message type and token phase of the code, or says
# which it does not model yet: a new one in ring/ must be placed in it.
known=$(sed -n 's/^ \* \(model\|not-modelled\): //p' "$here/ring.pml" | tr ' ' '\n')
for msg in $(sed -n 's/^\tX(\([A-Z_]*\), [0-9]*, ".*/\1/p' "$root/ring/wire.h"); do
	grep -qx "$msg" <<<"$known" ||
		{ echo "model: ring/wire.h has RING_MSG_$msg, which ring.pml neither models nor lists" >&2; fail=1; }
done
phases=$(sed -n 's/^ \* model-phase: //p' "$here/ring.pml" | tr ' ' '\n')
for ph in $(sed -n '/^enum token_phase {/,/^};/s/^\tPHASE_\([A-Z]*\),.*/\1/p' "$root/ring/node.c"); do
	grep -qx "$ph" <<<"$phases" ||
		{ echo "model: ring/node.c has PHASE_$ph, which ring.pml does not model" >&2; fail=1; }
done

for c in "${configs[@]}"; do
	IFS='|' read -r name dflags cflags rflags means <<<"$c"
	if check "$name" "$here/ring.pml" "$dflags" "$cflags" "$rflags"; then
		echo "           $means: no violation"
	else
		echo "model: $name: violation or error; trail in $out/$name (spin -t -p ring.pml)" >&2
		fail=1
	fi
done

# The planted bug: grant without a majority knowing the epoch (§4.4).
planted=$out/planted.pml
sed 's/ts\[m\] + 1 >= Q && tc\[m\] < MAXCNT/tc[m] < MAXCNT/' "$here/ring.pml" >"$planted"
if cmp -s "$planted" "$here/ring.pml"; then
	echo "model: the planted bug no longer applies (grant's guard changed): update run.sh" >&2
	fail=1
elif check planted "$planted" "-DN=3 -DLOSSES=0 -DDUPS=0 -DSWAPS=1 -DCRASHES=1 -DMAXGEN=2 -DMAXSEQ=4" \
	"-DSAFETY -DCOLLAPSE" "-m300000 -w26" >"$out/planted.out"; then
	cat "$out/planted.out"
	echo "model: the planted bug (no §4.4 confirmation) was not found: the model checks too little" >&2
	fail=1
else
	cat "$out/planted.out"
	echo "           planted bug (grants before a majority knows the epoch): found: $(grep -m1 'assertion violated' "$out/planted/pan.log")"
fi
exit $fail
