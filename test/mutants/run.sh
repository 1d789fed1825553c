#!/usr/bin/env bash
# make mutants: mutation testing of the protocol core (docs/testing.md,
# "Mutation testing"). Each test/mutants/NAME.mut weakens one rule of
# docs/PROTOCOL.md in a copy of the core file that holds its text (one of
# MUTANT_FILES, ring/core/*.c); the simulator, and with
# MUTANT_UNIT=1 the unit suites, must catch every one that matters.
#
# Run through make, which passes the compiler, flags, source lists and the
# simulator's classes, so that they stay those of build/sim and build/unit:
#   make mutants [MUTANT_SEEDS=2000] [MUTANT_JOBS=2] [MUTANT_TIMEOUT=600]
#                [MUTANT_UNIT=1] [MUTANTS="name ..."]
# Output: the table on stdout and in build/mutants/table.md; each mutant's
# copy of the core, build log and simulator output under build/mutants/NAME/.
# Exit 1 when a must-kill mutant survived, a mutant is stale (its ORIGINAL
# text no longer occurs exactly once in one core file), does not build or is malformed, or the
# unmutated core itself fails; 2 on a usage error.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
# A full run owns build/mutants; a subset (MUTANTS=...) gets a folder of its
# own under it, so that several subsets can run at once without removing
# each other's work.
# The folder is chosen once, by the first invocation: the runner calls
# itself for the baseline and for each mutant, and they must share it.
if [ -z "${MUTANT_OUT:-}" ]; then
	if [ -n "${MUTANTS:-}" ]; then
		MUTANT_OUT=build/mutants/subset-$$
	else
		MUTANT_OUT=build/mutants
	fi
	export MUTANT_OUT
fi
out=$MUTANT_OUT
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

# A path flattened into one object file name: ring/core/node.c -> ring_node.o
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
	printf 'mutants: %-26s %s (%s s)\n' "$name" "$shown" "$5" >&2
}

signame() {
	local s
	s=$(kill -l "$1" 2>/dev/null) && echo "SIG$s" || echo "signal $1"
}

# Runs SIM on class C for N seeds within LEFT seconds, output to LOG. Sets
# r_status (pass fail crash timeout usage), r_seed, r_inv and r_what.
run_class() {
	local sim=$1 c=$2 n=$3 left=$4 log=$5 rc line
	shift 5
	r_seed=- r_inv=- r_what=
	# --foreground: the simulator stays in our process group, so that
	# stopping the run (Ctrl-C, a kill of the group) stops it too.
	timeout --foreground -k 5 "$left" "$sim" --class "$c" --seeds "$n" "$@" >"$log" 2>&1
	rc=$?
	case $rc in
	0) r_status=pass ;;
	1)
		line=$(grep -m1 '^FAIL class=' "$log")
		if [ -z "$line" ]; then
			r_status=crash r_inv="crash (exit 1)"
			r_what="exit 1 without a FAIL line: $(tail -n 3 "$log")"
		else
			r_status=fail
			r_seed=$(sed -n 's/^FAIL class=[^ ]* seed=\([0-9]*\): .*/\1/p' <<<"$line")
			r_inv=$(sed -n 's/^FAIL class=[^ ]* seed=[0-9]*: \([^:]*\): .*/\1/p' <<<"$line")
			r_what=${line#*: }
			: "${r_seed:=-}" "${r_inv:=?}"
		fi
		;;
	2)
		r_status=usage r_inv=usage
		r_what="the simulator refused its arguments: $(head -n 1 "$log")"
		;;
	124 | 137)
		r_status=timeout r_inv=timeout
		r_what="class $c still running after $left s (MUTANT_TIMEOUT=$MUTANT_TIMEOUT)"
		;;
	*)
		r_status=crash
		if [ "$rc" -gt 128 ]; then
			r_inv="crash ($(signame $((rc - 128))))"
			r_what="the simulator died of $(signame $((rc - 128))) within seeds 1..$n"
		else
			r_inv="crash (exit $rc)"
			r_what="the simulator exited $rc: $(tail -n 1 "$log")"
		fi
		;;
	esac
}

# The seeds of class C that the unmutated core passes (MUTANT_CLASS_SEEDS).
seeds_of() {
	local kv
	for kv in $MUTANT_CLASS_SEEDS; do
		[ "${kv%%=*}" = "$1" ] && { echo "${kv#*=}"; return; }
	done
	echo 0
}

# Runs the simulator SIM on every class, then the unit binary when asked.
# Sets the result of the mutant in DIR; returns once one kills it.
hunt() {
	local sim=$1 start=$2 deadline=$3 c n left rc what
	for c in $CLASSES; do
		n=$(seeds_of "$c")
		[ "$n" -gt 0 ] || continue
		left=$((deadline - EPOCHSECONDS))
		if [ "$left" -le 0 ]; then
			result killed "$c" - timeout "$(since "$start")" \
				"no time left of MUTANT_TIMEOUT=${MUTANT_TIMEOUT} s before class $c"
			return
		fi
		run_class "$sim" "$c" "$n" "$left" "$dir/sim-$c.log"
		case $r_status in
		pass) ;;
		usage) result error "$c" - usage "$(since "$start")" "$r_what"; return ;;
		*) result killed "$c" "$r_seed" "$r_inv" "$(since "$start")" "$r_what"; return ;;
		esac
	done
	# The soak's seeds next (MUTANT_SOAK_SEEDS more a class, after make
	# test's): what the simulator finds given time, still before any
	# scripted test. Its kills show as class "soak:CLASS".
	if [ "$MUTANT_SOAK_SEEDS" -gt 0 ]; then
		for c in $CLASSES; do
			[ "$(seeds_of "$c")" = "$MUTANT_SEEDS" ] || continue
			[ "$(cat "$out/_baseline/soak-$c" 2>/dev/null)" = pass ] || continue
			left=$((deadline - EPOCHSECONDS))
			[ "$left" -gt 0 ] || break
			run_class "$sim" "$c" "$MUTANT_SOAK_SEEDS" "$left" "$dir/soak-$c.log" \
				--first $((MUTANT_SEEDS + 1))
			case $r_status in
			pass) ;;
			usage) result error "$c" - usage "$(since "$start")" "$r_what"; return ;;
			timeout) break ;;
			*) result killed "soak:$c" "$r_seed" "$r_inv" "$(since "$start")" "$r_what"; return ;;
			esac
		done
	fi
	if [ "$MUTANT_UNIT" = 1 ]; then
		left=$((deadline - EPOCHSECONDS))
		[ "$left" -gt 0 ] || left=1
		timeout --foreground -k 5 "$left" "$dir/unit" >"$dir/unit.log" 2>&1
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
	result survived - - - "$(since "$start")" "every class passed the baseline's seeds"
}

# The unmutated core on class C (run by xargs): build/mutants/_baseline/
# class-C holds status, seed, invariant, seconds and message.
base_class() {
	local c=$1 start
	name=_baseline dir=$out/_baseline
	start=$(now)
	mkdir -p "$dir"
	run_class "$snap/sim" "$c" "$MUTANT_SEEDS" "$MUTANT_TIMEOUT" "$dir/sim-$c.log"
	printf '%s\t%s\t%s\t%s\t%s\n' "$r_status" "$r_seed" "$r_inv" "$(since "$start")" \
		"${r_what//$'\t'/ }" >"$dir/class-$c"
	# The soak's seeds too: a mutant is judged on them only where the
	# unmutated core passes them all.
	if [ "$r_status" = pass ] && [ "$MUTANT_SOAK_SEEDS" -gt 0 ]; then
		run_class "$snap/sim" "$c" "$MUTANT_SOAK_SEEDS" "$MUTANT_TIMEOUT" "$dir/soak-$c.log" \
			--first $((MUTANT_SEEDS + 1))
		echo "$r_status" >"$dir/soak-$c"
		[ "$r_status" = pass ] ||
			printf 'mutants: baseline %-17s FAILED the soak at seed %s: %s\n' "$c" "$r_seed" "$r_what" >&2
		r_status=pass
	fi
	if [ "$r_status" = pass ]; then
		printf 'mutants: baseline %-17s passed %s seeds (%s s)\n' "$c" "$MUTANT_SEEDS" "$(since "$start")" >&2
	else
		printf 'mutants: baseline %-17s FAILED at seed %s: %s\n' "$c" "$r_seed" "$r_what" >&2
	fi
}

one() {
	name=$1
	dir=$out/$name
	local start deadline mut core_objs o f tgt tgt_obj rc found=0 why=
	start=$(now)
	deadline=$((EPOCHSECONDS + MUTANT_TIMEOUT))
	mkdir -p "$dir"
	mut=$here/$name.mut
	rm -rf "${dir:?}/$tdir"
	mkdir -p "$(dirname "$dir/$tdir")"
	cp -R "$snap/$tdir" "$dir/$tdir"
	# The core is several files: the mutant's text lives in exactly one.
	tgt=
	for f in $MUTANT_FILES; do
		awk -f "$here/apply.awk" "$mut" "$snap/$f" >"$dir/$f.new" 2>"$dir/apply.log"
		rc=$?
		case $rc in
		0) found=$((found + 1)) tgt=$f ;;
		3) rm -f "$dir/$f.new" ;;
		*)
			result bad - - - "$(since "$start")" "$(cat "$dir/apply.log")"
			return
			;;
		esac
		[ "$rc" = 0 ] && [ "$found" -gt 1 ] && why="its text occurs in more than one core file ($tgt and another)"
	done
	if [ "$found" = 0 ]; then
		result stale - - - "$(since "$start")" \
			"no core file holds every ORIGINAL block exactly once"
		return
	elif [ -n "$why" ]; then
		result bad - - - "$(since "$start")" "$why"
		return
	fi
	echo "$tgt" >"$dir/target"
	mv "$dir/$tgt.new" "$dir/$tgt"
	if cmp -s "$dir/$tgt" "$snap/$tgt"; then
		result bad - - - "$(since "$start")" "the replacement leaves $tgt unchanged"
		return
	fi
	tgt_obj=$dir/$(obj_of "$tgt")
	# shellcheck disable=SC2086 # flag lists are words
	if ! $MUTANT_CC $MUTANT_CFLAGS -I"$snap/ring" -I"$snap/test" -c "$dir/$tgt" -o "$tgt_obj" \
		>"$dir/build.log" 2>&1; then
		result broken - - - "$(since "$start")" \
			"does not compile: $(grep -m1 -E 'error|warning' "$dir/build.log")"
		return
	fi
	core_objs=()
	for f in $CORE_SRC; do
		o=$snap/obj/$(obj_of "$f")
		[ "$f" = "$tgt" ] && o=$tgt_obj
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
	MUTANT_JOBS MUTANT_TIMEOUT MUTANT_UNIT MUTANT_FILES
: "${MUTANT_SIM_LIBS:=}" "${MUTANT_UNIT_LIBS:=}" "${UNIT_SRC:=}" "${UNIT_EXTRA_SRC:=}" "${MUTANTS:=}"
: "${MUTANT_SOAK_SEEDS:=0}"
[[ $MUTANT_SOAK_SEEDS =~ ^[0-9]+$ ]] || die "MUTANT_SOAK_SEEDS must be a number of seeds"
top=$(pwd)
# The core's folder: every mutant gets a copy of it (MUTANT_FILES lie in it).
tdir=
for f in $MUTANT_FILES; do
	[ -f "$f" ] || die "no $f here: run from the repository's root"
	case " $CORE_SRC " in *" $f "*) ;; *) die "$f is not in CORE_SRC" ;; esac
	[ -z "$tdir" ] || [ "$tdir" = "$(dirname "$f")" ] || die "MUTANT_FILES lie in more than one folder"
	tdir=$(dirname "$f")
done
[ -n "$tdir" ] || die "MUTANT_FILES is empty"
[[ $MUTANT_SEEDS =~ ^[1-9][0-9]*$ ]] || die "MUTANT_SEEDS must be a positive number"
[[ $MUTANT_JOBS =~ ^[1-9][0-9]*$ ]] || die "MUTANT_JOBS must be a positive number"
[[ $MUTANT_TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "MUTANT_TIMEOUT must be a positive number of seconds"
[ -n "$CLASSES" ] || die "CLASSES is empty"
export top tdir here out snap MUTANT_CC MUTANT_CFLAGS MUTANT_LDFLAGS MUTANT_SIM_LIBS \
	MUTANT_UNIT_LIBS CORE_SRC SIM_SRC UNIT_SRC UNIT_EXTRA_SRC CLASSES MUTANT_SEEDS \
	MUTANT_TIMEOUT MUTANT_UNIT MUTANT_FILES MUTANT_SOAK_SEEDS

if [ "${1:-}" = --one ]; then
	one "$2"
	exit 0
elif [ "${1:-}" = --base ]; then
	base_class "$2"
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
	 $MUTANT_CC $MUTANT_CFLAGS -I"$snap/ring" -I"$snap/test" -c "$snap/{}" -o "$snap/obj/$o" 2>"$snap/obj/$o.log" ||
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

md() { sed 's/|/\\|/g' <<<"$1"; }
cell() { [ "$1" = - ] && echo "—" || md "$1"; }

# The unmutated core first, class by class: it must pass, or a kill would
# mean nothing. Where it fails a class at seed S, mutants run that class on
# seeds 1..S-1 only (the seeds it passes), and the run fails.
bt0=$(now)
echo "mutants: the unmutated core on classes $CLASSES, $MUTANT_SEEDS seeds each," \
	"$MUTANT_JOBS at a time" >&2
# shellcheck disable=SC2086
printf '%s\n' $CLASSES | xargs -P "$MUTANT_JOBS" -n 1 bash "$here/run.sh" --base
base_ok=1
base_notes=$(mktemp)
MUTANT_CLASS_SEEDS=
runnable=0
for c in $CLASSES; do
	if [ -s "$out/_baseline/class-$c" ]; then
		IFS=$'\t' read -r st seed inv secs what <"$out/_baseline/class-$c"
	else
		st=error seed=- inv=error what="the baseline left no result"
	fi
	case $st in
	pass) n=$MUTANT_SEEDS ;;
	fail)
		n=$((seed - 1))
		base_ok=0
		printf -- '- **the unmutated core fails class %s at seed %s** (%s): mutants run %s on seeds 1..%s only\n' \
			"$c" "$seed" "$(md "$what")" "$c" "$n" >>"$base_notes"
		;;
	*)
		n=0
		base_ok=0
		printf -- '- **the unmutated core fails class %s: %s** (%s): mutants do not run it\n' \
			"$c" "$inv" "$(md "$what")" >>"$base_notes"
		;;
	esac
	[ "$n" -gt 0 ] && runnable=1
	MUTANT_CLASS_SEEDS="$MUTANT_CLASS_SEEDS $c=$n"
done
export MUTANT_CLASS_SEEDS
if [ "$MUTANT_UNIT" = 1 ] && ! timeout --foreground -k 5 "$MUTANT_TIMEOUT" "$snap/unit" \
	>"$out/_baseline/unit.log" 2>&1; then
	base_ok=0
	MUTANT_UNIT=0
	echo "- **the unmutated core fails the unit suites** ($out/_baseline/unit.log): they kill no mutant" \
		>>"$base_notes"
fi
base_wall=$(since "$bt0")
if [ "$runnable" = 0 ]; then
	cat "$base_notes" >&2
	echo "mutants: the unmutated core fails every class; no mutant can be judged" >&2
	exit 1
fi

echo "mutants: ${#names[@]} mutants, $MUTANT_JOBS at a time" >&2
printf '%s\n' "${names[@]}" | xargs -P "$MUTANT_JOBS" -n 1 bash "$here/run.sh" --one
wall=$(since "$t0")

# ---- the table ----

rows=$(for n in "${names[@]}"; do
	f=$here/$n.mut
	sec=$(header "$f" section)
	printf '%s\t%s\n' "${sec:-?}" "$n"
done | sort -t$'\t' -k1,1V -k2,2)

killed=0 survived=0 stale=0 broken=0 eqv=0 bad=0 errors=0 by_sim=0 by_soak=0 by_unit=0
table=$(mktemp) details=$(mktemp) eqtable=$(mktemp) problems=$(mktemp)
trap 'rm -f "$table" "$details" "$eqtable" "$problems" "$base_notes"' EXIT
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
	killed)
		killed=$((killed + 1))
		case $cls in
		unit) by_unit=$((by_unit + 1)) ;;
		soak:*) by_soak=$((by_soak + 1)) ;;
		*) by_sim=$((by_sim + 1)) ;;
		esac
		;;
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
	stale) printf -- '- `%s` is STALE: %s; update test/mutants/%s.mut to the current code\n' \
		"$n" "$detail" "$n" >>"$problems" ;;
	broken) printf -- '- `%s` does not build: %s (log: %s/%s/build.log)\n' "$n" "$(md "$detail")" \
		"$out" "$n" >>"$problems" ;;
	bad) printf -- '- `%s` is malformed: %s\n' "$n" "$(md "$detail")" >>"$problems" ;;
	*) printf -- '- `%s`: %s\n' "$n" "$(md "$detail")" >>"$problems" ;;
	esac
done <<<"$rows"

unit_note=no
[ "$MUTANT_UNIT" = 1 ] && unit_note="yes (after the simulator)"
total=${#names[@]}
summary="$total mutants: $killed killed, $survived survived, $stale stale"
summary="$summary; the simulator alone kills $by_sim within make test's $MUTANT_SEEDS seeds a class"
[ "$MUTANT_SOAK_SEEDS" -gt 0 ] && summary="$summary and $by_soak more within $MUTANT_SOAK_SEEDS more"
[ "$MUTANT_UNIT" = 1 ] && summary="$summary, the unit suites $by_unit"
extra=""
[ "$eqv" -gt 0 ] && extra="$extra, $eqv equivalent (reported apart)"
[ "$broken" -gt 0 ] && extra="$extra, $broken do not build"
[ "$bad" -gt 0 ] && extra="$extra, $bad malformed"
[ "$errors" -gt 0 ] && extra="$extra, $errors errors"
[ "$base_ok" = 1 ] || extra="$extra; the unmutated core FAILS (see above)"
summary="$summary$extra; $wall s wall on $MUTANT_JOBS jobs"

{
	echo "## Mutants of the core ($tdir)"
	echo
	echo "Classes: $CLASSES; up to $MUTANT_SEEDS seeds each, stopping at the first failure;" \
		"unit suites: $unit_note; at most $MUTANT_TIMEOUT s per mutant; the unmutated core took $base_wall s."
	if [ -s "$base_notes" ]; then
		echo
		cat "$base_notes"
	fi
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
