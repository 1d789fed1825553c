#!/usr/bin/env bash
# make mutants: mutation testing of the protocol core (docs/testing.md,
# "Mutation testing"). Each test/mutants/NAME.mut weakens one rule of
# docs/PROTOCOL.md in a copy of ring/node.c; the simulator, and with
# MUTANT_UNIT=1 the unit suites, must catch every one that matters.
#
# Run through make, which passes the compiler, flags, source lists and the
# simulator's classes, so that they stay those of build/sim and build/unit:
#   make mutants [MUTANT_SEEDS=2000] [MUTANT_JOBS=2] [MUTANT_TIMEOUT=600]
#                [MUTANT_UNIT=1] [MUTANTS="name ..."]
# Output: the table on stdout and in build/mutants/table.md; each mutant's
# copy of the core, build log and simulator output under build/mutants/NAME/.
# Exit 1 when a must-kill mutant survived, a mutant is stale (its ORIGINAL
# text no longer occurs exactly once), does not build or is malformed, or the
# unmutated core itself fails; 2 on a usage error.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=build/mutants
snap=$out/_src

die() {
	echo "mutants: $*" >&2
	exit 2
}

need() {
	local v
	for v in "$@"; do
		[ -n "${!v+x}" ] || die "$v is not set: run this through 'make mutants'"
	done
}

now() { echo "${EPOCHREALTIME/,/.}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# One header of a mutant file: "key: value", before its first block.
header() {
	awk -v k="$2" '/^--- / { exit } index($0, k ":") == 1 {
		v = substr($0, length(k) + 2); sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v)
		print v; exit }' "$1"
}

# A path flattened into one object file name: ring/node.c -> ring_node.o
obj_of() {
	local f=${1%.c}
	echo "${f//\//_}.o"
}

# ---- one mutant (run by xargs, in parallel) ----

# Writes DIR/result: status, class, seed, invariant, seconds, detail
# (tab-separated). status: killed survived stale broken bad error.
result() {
	local detail=${6//$'\t'/ }
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "${detail//$'\n'/ }" \
		>"$dir/result"
	local shown=$1
	[ "$1" = killed ] && shown="killed by $2 seed $3: $4"
	if [ "$name" = _baseline ]; then
		[ "$1" = survived ] && shown=passed || shown="FAILED ($shown)"
	fi
	printf 'mutants: %-26s %s (%s s)\n' "$name" "$shown" "$5" >&2
}

signame() {
	local s
	s=$(kill -l "$1" 2>/dev/null) && echo "SIG$s" || echo "signal $1"
}

# Runs the simulator SIM on every class, then the unit binary when asked.
# Sets the result of the mutant in DIR; returns once one kills it.
hunt() {
	local sim=$1 start=$2 deadline=$3 c rc left line seed inv what
	for c in $CLASSES; do
		left=$((deadline - EPOCHSECONDS))
		if [ "$left" -le 0 ]; then
			result killed "$c" - timeout "$(since "$start")" \
				"no time left of MUTANT_TIMEOUT=${MUTANT_TIMEOUT} s before class $c"
			return
		fi
		timeout -k 5 "$left" "$sim" --class "$c" --seeds "$MUTANT_SEEDS" >"$dir/sim-$c.log" 2>&1
		rc=$?
		case $rc in
		0) continue ;;
		1)
			line=$(grep -m1 '^FAIL class=' "$dir/sim-$c.log")
			if [ -z "$line" ]; then
				result killed "$c" - "crash (exit 1)" "$(since "$start")" \
					"exit 1 without a FAIL line: $(tail -n 3 "$dir/sim-$c.log")"
				return
			fi
			seed=$(sed -n 's/^FAIL class=[^ ]* seed=\([0-9]*\): .*/\1/p' <<<"$line")
			inv=$(sed -n 's/^FAIL class=[^ ]* seed=[0-9]*: \([^:]*\): .*/\1/p' <<<"$line")
			what=${line#*: }
			result killed "$c" "${seed:--}" "${inv:-?}" "$(since "$start")" "$what"
			return
			;;
		2)
			result error "$c" - "usage" "$(since "$start")" \
				"the simulator refused its arguments: $(head -n 1 "$dir/sim-$c.log")"
			return
			;;
		124 | 137)
			result killed "$c" - timeout "$(since "$start")" \
				"class $c still running when MUTANT_TIMEOUT=${MUTANT_TIMEOUT} s ran out"
			return
			;;
		*)
			if [ "$rc" -gt 128 ]; then
				result killed "$c" - "crash ($(signame $((rc - 128))))" "$(since "$start")" \
					"the simulator died of $(signame $((rc - 128))) within seeds 1..$MUTANT_SEEDS"
			else
				result killed "$c" - "crash (exit $rc)" "$(since "$start")" \
					"the simulator exited $rc: $(tail -n 1 "$dir/sim-$c.log")"
			fi
			return
			;;
		esac
	done
	if [ "$MUTANT_UNIT" = 1 ]; then
		left=$((deadline - EPOCHSECONDS))
		[ "$left" -gt 0 ] || left=1
		(cd "$top" && timeout -k 5 "$left" "$top/$dir/unit") >"$dir/unit.log" 2>&1
		rc=$?
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			result killed unit - timeout "$(since "$start")" "the unit suites ran out of time"
			return
		elif [ "$rc" -gt 128 ]; then
			result killed unit - "crash ($(signame $((rc - 128))))" "$(since "$start")" \
				"the unit binary died of $(signame $((rc - 128)))"
			return
		elif [ "$rc" -ne 0 ]; then
			what=$(grep -m1 -- '\.\.\.FAILED' "$dir/unit.log" | sed 's/^ *Test: //; s/ \.\.\.FAILED.*//')
			result killed unit - "${what:-failed}" "$(since "$start")" \
				"$(grep -c -- '\.\.\.FAILED' "$dir/unit.log") unit test(s) failed, first: ${what:-?}"
			return
		fi
	fi
	result survived - - - "$(since "$start")" "every class passed $MUTANT_SEEDS seeds"
}

one() {
	name=$1
	dir=$out/$name
	local start deadline mut core_objs o f tgt_obj
	start=$(now)
	deadline=$((EPOCHSECONDS + MUTANT_TIMEOUT))
	mkdir -p "$dir"
	if [ "$name" = _baseline ]; then
		ln -sf ../_src/sim "$dir/sim"
		[ "$MUTANT_UNIT" = 1 ] && ln -sf ../_src/unit "$dir/unit"
		hunt "$dir/sim" "$start" "$deadline"
		return
	fi
	mut=$here/$name.mut
	rm -rf "${dir:?}/$tdir"
	cp -R "$snap/$tdir" "$dir/$tdir"
	awk -f "$here/apply.awk" "$mut" "$snap/$MUTANT_TARGET" >"$dir/$MUTANT_TARGET.new" \
		2>"$dir/apply.log"
	case $? in
	0) ;;
	3)
		result stale - - - "$(since "$start")" "$(cat "$dir/apply.log")"
		return
		;;
	*)
		result bad - - - "$(since "$start")" "$(cat "$dir/apply.log")"
		return
		;;
	esac
	mv "$dir/$MUTANT_TARGET.new" "$dir/$MUTANT_TARGET"
	if cmp -s "$dir/$MUTANT_TARGET" "$snap/$MUTANT_TARGET"; then
		result bad - - - "$(since "$start")" "the replacement leaves $MUTANT_TARGET unchanged"
		return
	fi
	tgt_obj=$dir/$(obj_of "$MUTANT_TARGET")
	# shellcheck disable=SC2086 # flag lists are words
	if ! $MUTANT_CC $MUTANT_CFLAGS -I"$dir/$tdir" -c "$dir/$MUTANT_TARGET" -o "$tgt_obj" \
		>"$dir/build.log" 2>&1; then
		result broken - - - "$(since "$start")" \
			"does not compile: $(grep -m1 -E 'error|warning' "$dir/build.log")"
		return
	fi
	core_objs=()
	for f in $CORE_SRC; do
		o=$snap/obj/$(obj_of "$f")
		[ "$f" = "$MUTANT_TARGET" ] && o=$tgt_obj
		core_objs+=("$o")
	done
	local sim_objs=() unit_objs=()
	for f in $SIM_SRC; do sim_objs+=("$snap/obj/$(obj_of "$f")"); done
	# shellcheck disable=SC2086
	if ! $MUTANT_CC $MUTANT_LDFLAGS "${sim_objs[@]}" "${core_objs[@]}" $MUTANT_SIM_LIBS \
		-o "$dir/sim" >>"$dir/build.log" 2>&1; then
		result broken - - - "$(since "$start")" "the simulator does not link: $(tail -n 1 "$dir/build.log")"
		return
	fi
	if [ "$MUTANT_UNIT" = 1 ]; then
		for f in $UNIT_SRC $UNIT_EXTRA_SRC; do unit_objs+=("$snap/obj/$(obj_of "$f")"); done
		# shellcheck disable=SC2086
		if ! $MUTANT_CC $MUTANT_LDFLAGS "${unit_objs[@]}" "${core_objs[@]}" $MUTANT_UNIT_LIBS \
			-o "$dir/unit" >>"$dir/build.log" 2>&1; then
			result broken - - - "$(since "$start")" "the unit binary does not link"
			return
		fi
	fi
	hunt "$dir/sim" "$start" "$deadline"
}

# ---- the whole run ----

need MUTANT_CC MUTANT_CFLAGS MUTANT_LDFLAGS CORE_SRC SIM_SRC CLASSES MUTANT_SEEDS \
	MUTANT_JOBS MUTANT_TIMEOUT MUTANT_UNIT MUTANT_TARGET
: "${MUTANT_SIM_LIBS:=}" "${MUTANT_UNIT_LIBS:=}" "${UNIT_SRC:=}" "${UNIT_EXTRA_SRC:=}" "${MUTANTS:=}"
top=$(pwd)
tdir=$(dirname "$MUTANT_TARGET")
[ -f "$MUTANT_TARGET" ] || die "no $MUTANT_TARGET here: run from the repository's root"
case " $CORE_SRC " in *" $MUTANT_TARGET "*) ;; *) die "$MUTANT_TARGET is not in CORE_SRC" ;; esac
[[ $MUTANT_SEEDS =~ ^[1-9][0-9]*$ ]] || die "MUTANT_SEEDS must be a positive number"
[[ $MUTANT_JOBS =~ ^[1-9][0-9]*$ ]] || die "MUTANT_JOBS must be a positive number"
[[ $MUTANT_TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "MUTANT_TIMEOUT must be a positive number of seconds"
[ -n "$CLASSES" ] || die "CLASSES is empty"
export top tdir here out snap MUTANT_CC MUTANT_CFLAGS MUTANT_LDFLAGS MUTANT_SIM_LIBS \
	MUTANT_UNIT_LIBS CORE_SRC SIM_SRC UNIT_SRC UNIT_EXTRA_SRC CLASSES MUTANT_SEEDS \
	MUTANT_TIMEOUT MUTANT_UNIT MUTANT_TARGET

if [ "${1:-}" = --one ]; then
	one "$2"
	exit 0
fi

t0=$(now)

# The mutants, in file-name order, or those MUTANTS names.
names=()
if [ -n "$MUTANTS" ]; then
	for n in $MUTANTS; do
		[ -f "$here/$n.mut" ] || die "no mutant $n (test/mutants/$n.mut)"
		names+=("$n")
	done
else
	for f in "$here"/*.mut; do
		[ -f "$f" ] && names+=("$(basename "$f" .mut)")
	done
fi
[ "${#names[@]}" -gt 0 ] || die "no mutants in test/mutants"

rm -rf "$out"
mkdir -p "$snap/obj"

# A snapshot of the sources, so that edits made during the run by others do
# not mix versions: the directory of every source, its .c and .h files.
srcs="$CORE_SRC $SIM_SRC"
[ "$MUTANT_UNIT" = 1 ] && srcs="$srcs $UNIT_SRC $UNIT_EXTRA_SRC"
for d in $(for f in $srcs; do dirname "$f"; done | sort -u); do
	mkdir -p "$snap/$d"
	cp -p "$d"/*.c "$d"/*.h "$snap/$d/" 2>/dev/null
done
for f in $srcs; do [ -f "$snap/$f" ] || die "source $f is missing"; done

# The unmutated build, whose objects every mutant shares but for its own
# node.o. It must build and pass, or no kill below would mean anything.
echo "mutants: building the unmutated core ($(wc -w <<<"$srcs") sources)" >&2
# shellcheck disable=SC2086
if ! printf '%s\n' $srcs | sort -u | xargs -P "$MUTANT_JOBS" -I{} sh -c \
	'o=$(echo "{}" | sed "s/\.c\$//; s|/|_|g").o
	 $MUTANT_CC $MUTANT_CFLAGS -I"$snap/$tdir" -c "$snap/{}" -o "$snap/obj/$o" 2>"$snap/obj/$o.log" ||
	 { cat "$snap/obj/$o.log"; exit 1; }' >"$snap/build.log" 2>&1; then
	cat "$snap/build.log" >&2
	echo "mutants: the unmutated sources do not build (an edit in progress?); try again later" >&2
	exit 1
fi
objs() { local f; for f in "$@"; do printf '%s ' "$snap/obj/$(obj_of "$f")"; done; }
# shellcheck disable=SC2046,SC2086
$MUTANT_CC $MUTANT_LDFLAGS $(objs $SIM_SRC $CORE_SRC) $MUTANT_SIM_LIBS -o "$snap/sim" ||
	{ echo "mutants: the unmutated simulator does not link" >&2; exit 1; }
if [ "$MUTANT_UNIT" = 1 ]; then
	# shellcheck disable=SC2046,SC2086
	$MUTANT_CC $MUTANT_LDFLAGS $(objs $UNIT_SRC $CORE_SRC $UNIT_EXTRA_SRC) $MUTANT_UNIT_LIBS \
		-o "$snap/unit" || { echo "mutants: the unmutated unit binary does not link" >&2; exit 1; }
fi

echo "mutants: ${#names[@]} mutants and the baseline, $MUTANT_JOBS at a time;" \
	"classes: $CLASSES; $MUTANT_SEEDS seeds each" >&2
printf '%s\n' _baseline "${names[@]}" |
	xargs -P "$MUTANT_JOBS" -n 1 bash "$here/run.sh" --one
wall=$(since "$t0")

# ---- the table ----

md() { sed 's/|/\\|/g' <<<"$1"; }
cell() { [ "$1" = - ] && echo "—" || md "$1"; }

rows=$(for n in "${names[@]}"; do
	f=$here/$n.mut
	sec=$(header "$f" section)
	printf '%s\t%s\n' "${sec:-?}" "$n"
done | sort -t$'\t' -k1,1V -k2,2)

killed=0 survived=0 stale=0 broken=0 eqv=0 bad=0 errors=0
table=$(mktemp) details=$(mktemp) eqtable=$(mktemp) problems=$(mktemp)
trap 'rm -f "$table" "$details" "$eqtable" "$problems"' EXIT
{
	echo "| mutant | § | rule weakened | result | class | seed | invariant | time |"
	echo "|---|---|---|---|---|---|---|---|"
} >"$table"
{
	echo "| mutant | § | rule weakened | result | class | seed | why it is equivalent |"
	echo "|---|---|---|---|---|---|---|"
} >"$eqtable"

while IFS=$'\t' read -r sec n; do
	f=$here/$n.mut
	rule=$(header "$f" rule)
	kind=$(header "$f" kind)
	arg=$(header "$f" argument)
	: "${kind:=must-kill}"
	if [ -s "$out/$n/result" ]; then
		IFS=$'\t' read -r st cls seed inv secs detail <"$out/$n/result"
	else
		st=error cls=- seed=- inv=- secs=- detail="the job left no result (see $out/$n)"
	fi
	# Headers are checked here: a mutant must say what it weakens, and an
	# equivalent one why.
	if [ -z "$rule" ] || [ "$sec" = "?" ]; then
		st=bad detail="a 'section:' and a 'rule:' header are required"
	elif [ "$kind" != must-kill ] && [ "$kind" != equivalent ]; then
		st=bad detail="kind must be must-kill or equivalent, not '$kind'"
	elif [ "$kind" = equivalent ] && [ -z "$arg" ]; then
		st=bad detail="an equivalent mutant needs an 'argument:' line"
	fi
	case $st in
	killed) res=killed ;;
	survived) res="**SURVIVED**" ;;
	stale) res="**STALE**" ;;
	broken) res="**DOES NOT BUILD**" ;;
	bad) res="**MALFORMED**" ;;
	*) res="**ERROR**" ;;
	esac
	if [ "$kind" = equivalent ] && [ "$st" != stale ] && [ "$st" != bad ] && [ "$st" != broken ]; then
		eqv=$((eqv + 1))
		[ "$st" = killed ] && res="killed (so not equivalent: fix its argument)"
		[ "$st" = survived ] && res=survived
		printf '| %s | §%s | %s | %s | %s | %s | %s |\n' "$n" "$sec" "$(md "$rule")" "$res" \
			"$(cell "$cls")" "$(cell "$seed")" "$(md "$arg")" >>"$eqtable"
		[ "$st" = killed ] && printf -- '- `%s` (equivalent) killed: %s\n' "$n" "$(md "$detail")" >>"$details"
		continue
	fi
	case $st in
	killed) killed=$((killed + 1)) ;;
	survived) survived=$((survived + 1)) ;;
	stale) stale=$((stale + 1)) ;;
	broken) broken=$((broken + 1)) ;;
	bad) bad=$((bad + 1)) ;;
	*) errors=$((errors + 1)) ;;
	esac
	printf '| %s | §%s | %s | %s | %s | %s | %s | %s s |\n' "$n" "$sec" "$(md "$rule")" "$res" \
		"$(cell "$cls")" "$(cell "$seed")" "$(cell "$inv")" "$secs" >>"$table"
	case $st in
	killed) printf -- '- `%s`: %s\n' "$n" "$(md "$detail")" >>"$details" ;;
	survived) printf -- '- `%s` (§%s) survived: %s\n' "$n" "$sec" "$(md "$rule")" >>"$problems" ;;
	stale) printf -- '- `%s` is STALE: %s in %s; update test/mutants/%s.mut to the current code\n' \
		"$n" "$detail" "$MUTANT_TARGET" "$n" >>"$problems" ;;
	broken) printf -- '- `%s` does not build: %s (log: %s/%s/build.log)\n' "$n" "$(md "$detail")" \
		"$out" "$n" >>"$problems" ;;
	bad) printf -- '- `%s` is malformed: %s\n' "$n" "$(md "$detail")" >>"$problems" ;;
	*) printf -- '- `%s`: %s\n' "$n" "$(md "$detail")" >>"$problems" ;;
	esac
done <<<"$rows"

base_ok=0
if [ -s "$out/_baseline/result" ]; then
	IFS=$'\t' read -r st cls seed inv secs detail <"$out/_baseline/result"
	if [ "$st" = survived ]; then
		base_ok=1
		base="the unmutated core passed every class in $secs s"
	else
		base="**the unmutated core FAILS** ($cls, seed $seed: $detail): every kill below is suspect"
	fi
else
	base="**the unmutated core left no result**"
fi

unit_note=no
[ "$MUTANT_UNIT" = 1 ] && unit_note="yes (after the simulator)"
total=${#names[@]}
summary="$total mutants: $killed killed, $survived survived, $stale stale"
extra=""
[ "$eqv" -gt 0 ] && extra="$extra, $eqv equivalent (reported apart)"
[ "$broken" -gt 0 ] && extra="$extra, $broken do not build"
[ "$bad" -gt 0 ] && extra="$extra, $bad malformed"
[ "$errors" -gt 0 ] && extra="$extra, $errors errors"
summary="$summary$extra; $wall s wall on $MUTANT_JOBS jobs"

{
	echo "## Mutants of $MUTANT_TARGET"
	echo
	echo "Classes: $CLASSES; up to $MUTANT_SEEDS seeds each, stopping at the first failure;" \
		"unit suites: $unit_note; at most $MUTANT_TIMEOUT s per mutant; baseline: $base."
	echo
	cat "$table"
	if [ "$eqv" -gt 0 ]; then
		echo
		echo "Equivalent mutants (their removal cannot be observed; they do not fail the run):"
		echo
		cat "$eqtable"
	fi
	if [ -s "$problems" ]; then
		echo
		echo "To look at:"
		echo
		cat "$problems"
	fi
	if [ -s "$details" ]; then
		echo
		echo "How each was killed:"
		echo
		cat "$details"
	fi
	echo
	echo "$summary"
} | tee "$out/table.md"
echo "mutants: table in $out/table.md" >&2

[ "$base_ok" = 1 ] && [ "$survived" -eq 0 ] && [ "$stale" -eq 0 ] && [ "$broken" -eq 0 ] &&
	[ "$bad" -eq 0 ] && [ "$errors" -eq 0 ]
