#!/bin/bash
# README.md's tour, run as written: every ```bash block after a line
# "<!-- tour -->", in order, in one bash, from the repository's root. Only
# the places change: conf/local5.ini becomes a copy on ports pick_ports
# reserved (other tests and `make demo` may hold 7101..7105), its state_dir
# (conf/demo-state, beside the file) and the tour's folder build/tour become
# folders of this test's temp dir. Then the outcomes the README promises are
# checked: the ring grants, the killed holder's run exits 70, trace infers
# the crash, the journal's fences grow, the stale fence is refused with
# exit 3, the drills are accepted, and the clean-up stops every member.
source "$(dirname "$0")/lib.sh"

README=${TOUR_README:-$ROOT/README.md} # another copy: to check that the test catches a broken tour
pick_ports 5
grep -q '^state_dir = demo-state ' "$ROOT/conf/local5.ini" || fail "conf/local5.ini's state_dir is not demo-state"
awk -v b="$PORT_BASE" '/^port = 710[1-5]( |$)/ { $0 = "port = " (b + substr($3, 4, 1) - 1) } 1' \
	"$ROOT/conf/local5.ini" >"$T/local5.ini"
grep -q "^port = $PORT_BASE\$" "$T/local5.ini" || fail "the copy of local5.ini has no port $PORT_BASE"

# The tour's blocks, with a marker line before each so that the output can
# be told apart.
awk '
	/^<!-- tour -->$/ { want = 1; next }
	want && /^```bash$/ { n++; print "echo \"### block " n "\""; inblock = 1; want = 0; next }
	{ want = 0 }
	inblock && /^```$/ { inblock = 0; next }
	inblock { print }
' "$README" >"$T/tour.raw"
blocks=$(grep -c '^echo "### block' "$T/tour.raw")
((blocks >= 8)) || fail "README.md has $blocks tour blocks, want at least 8 (markers lost?)"
sed -e "s#conf/local5\.ini#$T/local5.ini#g" -e "s#conf/demo-state#$T/demo-state#g" \
	-e "s#build/tour#$T/tour#g" "$T/tour.raw" >"$T/tour.sh"
! grep -Eq '/tmp/|conf/|build/' < <(sed "s#$T/##g" "$T/tour.sh") ||
	fail "the tour names paths not replaced: $(sed "s#$T/##g" "$T/tour.sh" | grep -E '/tmp/|conf/|build/')"
say "running $blocks blocks of README.md's tour"

# In its own process group (spawn): cleanup ends whatever it left running.
SPAWN_OUT=$T/tour.out
spawn bash -c "cd '$ROOT' && exec bash '$T/tour.sh'"
tour=$BG_PID
wait_bg "$tour" 60 || fail "the tour did not end within 60 s: $(tail -n 20 "$T/tour.out")"
sed 's/^/  | /' "$T/tour.out"
((BG_RC == 0)) || fail "the tour's shell exited $BG_RC"
groups_gone "$tour" || fail "processes of the tour outlived its clean-up: $(group_pids "$tour")"

out=$(cat "$T/tour.out")
block() { sed -n "/^### block $1\$/,/^### block $(($1 + 1))\$/p" "$T/tour.out"; }
grep -q '^the ring grants$' <<<"$out" || fail "step 2: the ring did not grant"
grep -q '^run exited 70$' <<<"$out" || fail "step 4: the killed holder's run did not exit 70"
grep -q '^granted again$' <<<"$out" || fail "step 4: no grant after the kill"
grep -Eq '^ +3 +[^ ]+ +down' <<<"$out" || fail "step 4: ringctl ring does not show member 3 down"
grep -Eq '^inferred fault at .*: crash n3 +next grant .* s later' <<<"$out" ||
	fail "step 4: trace did not infer the crash of n3"
# The ring's own start is not a fault: the kill is the only one, as the README says.
grep -Eq '^  faults: 1 \(0 from faults.log, 1 inferred' <<<"$out" ||
	fail "step 4: trace counts other faults than the kill: $(grep -E 'fault' <<<"$out")"
grep -q '^verdict: OK' <<<"$out" || fail "step 4: trace found a violation"
f2=$(sed -n 's/^member 2 was here, fence \([0-9]*\)$/\1/p' <<<"$out")
f4=$(sed -n 's/^member 4 was here, fence \([0-9]*\)$/\1/p' <<<"$out")
[[ -n $f2 && -n $f4 ]] && ((f4 > f2)) || fail "step 5: the journal is not member 2 then 4, fences growing: $f2 $f4"
grep -q "^stale fence $f2 < $f4\$" <<<"$out" || fail "step 5: the late write was not refused as stale"
grep -q '^fenced-append exited 3$' <<<"$out" || fail "step 5: the stale fence did not exit 3"
# Step 2's sample table is what `ringctl ring` printed, but for the numbers
# that differ from run to run (epochs, fences, ms, ports) and the key's path;
# of a member's row, its id, address, state, successor and alive set.
norm() {
	sed -E -e 's#\(the ring'"'"'s own key [^)]*\)#(KEY)#' -e 's/[0-9]+/N/g' -e 's/ +/ /g' |
		awk 'NR <= 2 { print; next } { print $1, $2, $3, $6, $NF }'
}
sample=$(awk '/^<!-- ring-table -->$/ { want = 1; next } want && /^```$/ { if (on) exit; on = 1; next } on' "$README" | norm)
[[ -n $sample ]] || fail "README.md has no <!-- ring-table --> sample"
real=$(block 2 | grep -v '^### block' | norm)
[[ $sample == "$real" ]] || fail "step 2: README's ring table is not what the tour printed:
$(diff <(echo "$sample") <(echo "$real"))"
# The drills: one at a time, each accepted (ringctl inject says nothing
# when the member answers OK) and seen at work in the logs.
drills=$(grep -n '^inject ' "$T/tour.out")
for want in "drop-token at member 2:.* loss_suspect" "loss 30 at member 4:.* retransmit" \
	"block 3 at member 2:.* successor_skip" "pause 1500 at member 4:.* pause_detected"; do
	grep -Eq "^[0-9]+:inject $want" <<<"$drills" || fail "step 6: no drill line 'inject $want': $drills"
done
odd=$(awk '/^### block/ { if (b ~ /\ninject drop-token/) printf "%s", b; b = ""; next } { b = b "\n" $0 }' \
	"$T/tour.out" | grep -v -e '^inject ' -e '^$' -e 'not granted')
[[ -z $odd ]] || fail "step 6: a drill was not accepted: $odd"
[[ ! -e $T/demo-state && ! -e $T/tour ]] || fail "the clean-up left files"
pass "README's tour ran as written: $blocks blocks, fences $f2 < $f4, stale refused, all members stopped"
