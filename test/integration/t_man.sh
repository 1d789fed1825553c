#!/bin/bash
# The man pages cannot drift from the code: every key of CONF_KEYS (its
# section, default and range) is in ring.conf(5); every command of
# ringctl's command table, its options, inject words and exit codes in
# ringctl(1); ringd's flags, signals, exit codes and every log event (with
# its fields) in ringd(8); no page documents an exit code the code lacks.
# All three render under groff -ww and man -l without a warning, carry the
# Makefile's VERSION, and both programs' --version say it.
# Everything is read from the sources; MAN_SRC (default the checkout) lets
# a check of the check point it at a broken copy.
source "$(dirname "$0")/lib.sh"
need_tools groff man perl
SRC=${MAN_SRC:-$ROOT}
MAN=$SRC/docs/man
problems=()
bad() { problems+=("$*"); }

# ---- the pages, as records ----

# manparse PAGE: one line per entry, tab separated:
#   TP <section> <subsection> <tag> <body>   a .TP entry (tag and text normalised)
#   SS <section> <title>                     a subsection
#   SH <section> <text>                      a section's whole text
# Normalised: macros dropped (alternating ones joined as groff joins them),
# \- to -, \(mu to x, font changes and quotes gone, lines joined by spaces.
cat >"$T/manparse.pl" <<'EOF'
use strict; use warnings;
sub args { my $s = shift; my @a; while ($s =~ /\G\s*("((?:[^"]|"")*)"|(\S+))/g) { push @a, defined $2 ? $2 : $3 } @a }
sub norm {
	my $l = shift;
	if ($l =~ /^\.(\w+)\s*(.*)$/) {
		my ($m, $rest) = ($1, $2);
		my @a = args($rest);
		$l = $m =~ /^(BR|RB|IR|RI|BI|IB)$/ ? join('', @a) : $m =~ /^(B|I|SY|SS|SH|TH)$/ ? join(' ', @a) : '';
	}
	$l =~ s/\\-/-/g; $l =~ s/\\\(mu/x/g; $l =~ s/\\\((lq|rq)/"/g; $l =~ s/\\\(aq/'/g;
	$l =~ s/\\\(bu//g; $l =~ s/\\f[BIRP]//g; $l =~ s/\\&//g; $l =~ s/\\e/\\/g;
	return $l;
}
my ($sh, $ss, $tag, $body, $want_tag, %shtext) = ('', '', undef, '', 0);
my @order;
sub flush { if (defined $tag) { $body =~ s/\s+/ /g; $body =~ s/^ | $//g; print "TP\t$sh\t$ss\t$tag\t$body\n" } undef $tag; $body = '' }
while (my $l = <>) {
	chomp $l;
	next if $l =~ /^\.\\"/;
	if ($l =~ /^\.SH\s/) { flush(); $sh = norm($l); $ss = ''; push @order, $sh; next }
	if ($l =~ /^\.SS\s/) { flush(); $ss = norm($l); print "SS\t$sh\t$ss\n"; next }
	if ($l =~ /^\.TP/) { flush(); $want_tag = 1; next }
	if ($l =~ /^\.(PP|P|LP)$/) { flush(); next }
	my $n = norm($l);
	$shtext{$sh} .= " $n";
	if ($want_tag) { $tag = $n; $want_tag = 0; next }
	$body .= " $n" if defined $tag;
}
flush();
for my $s (@order) { (my $t = $shtext{$s} // '') =~ s/\s+/ /g; print "SH\t$s\t$t\n" }
EOF
for p in ringd.8 ringctl.1 ring.conf.5; do
	[[ -f $MAN/$p ]] || fail "no $MAN/$p"
	perl "$T/manparse.pl" "$MAN/$p" >"$T/$p.rec" || fail "cannot parse $p"
done
# entry PAGE SECTION-RE TAG-RE: the body of the first .TP entry whose
# section matches and whose tag matches (anchored), or nothing.
entry() { awk -F'\t' -v s="$2" -v t="^($3)\$" '$1 == "TP" && $2 ~ s && $4 ~ t { print $5; exit }' "$T/$1.rec"; }
# section_text PAGE SECTION-RE: a section's whole normalised text.
section_text() { awk -F'\t' -v s="$2" '$1 == "SH" && $2 ~ s { print $3 }' "$T/$1.rec"; }
# has_word TEXT WORD: WORD, taken literally, stands alone in TEXT. in_list
# LIST WORD: WORD is a line of LIST. (No forks: a loaded box runs this often.)
has_word() { [[ $1 =~ (^|[^a-z0-9_-])"$2"([^a-z0-9_-]|$) ]]; }
in_list() { [[ $'\n'$1$'\n' == *$'\n'"$2"$'\n'* ]]; }

# ---- ring.conf(5): every key of CONF_KEYS ----

keys=$(perl -0777 -ne '
	my ($m) = /#define CONF_KEYS\(X\)((?:[^\n]*\\\n)*[^\n]*\n)/ or die "no CONF_KEYS\n";
	$m =~ s/\\\n/ /g;
	my $n = () = $m =~ /\bX\(/g;
	my $s = qr/"(?:[^"\\]|\\.)*"/; my @rows;
	while ($m =~ /X\(\s*(RING|NODE)\s*,\s*(\w+)\s*,\s*\w+\s*,\s*\w+\([^)]*\)\s*,\s*(\w+)\s*,\s*(NULL|$s)\s*,\s*[^,]+?\s*,\s*[^,]+?\s*,\s*($s)/g) {
		my @r = ($1, $2, $3, $4, $5); s/^"|"$//g for @r[3, 4]; push @rows, join("\x1f", @r);
	}
	@rows == $n or die "parsed " . scalar(@rows) . " of $n CONF_KEYS rows\n";
	print "$_\n" for @rows;' "$SRC/ring/common/conf.c") || fail "cannot read CONF_KEYS in ring/common/conf.c"
nkeys=0
# (Fields split on \x1f, not a tab: read would merge empty tab-separated ones.)
while IFS=$'\x1f' read -r sec key how def values; do
	nkeys=$((nkeys + 1))
	[[ $sec == RING ]] && sre='^\[RING\] SECTION' || sre='^\[NODE\.ID\] SECTIONS'
	body=$(entry ring.conf.5 "$sre" "$key")
	if [[ -z $body ]]; then
		bad "ring.conf(5): key $key has no entry in its section ($sre)"
		continue
	fi
	case $how in
	REQUIRED) want=Required ;;
	*) [[ -z $def ]] && want="Default: empty" || want="Default: $def" ;;
	esac
	[[ $body == *"$want"* ]] || bad "ring.conf(5): $key says not '$want': $body"
	[[ $body == *"$values"* ]] || bad "ring.conf(5): $key does not give its values '$values': $body"
done <<<"$keys"
# And no key the table lacks: every entry of the two sections is a key.
while IFS= read -r tag; do
	grep -qP "\x1f\Q$tag\E\x1f" <<<"$keys" || bad "ring.conf(5) documents a key CONF_KEYS lacks: $tag"
done < <(awk -F'\t' '$1 == "TP" && $2 ~ /^\[(RING|NODE\.ID)\]/ { print $4 }' "$T/ring.conf.5.rec")

# ---- ringctl(1): commands, their options, inject words, exit codes ----

cmds=$(sed -n '/} commands\[\] = {/,/^};/p' "$SRC/ring/ctl/ringctl.c" | grep -oP '^\s*\{"\K[a-z-]+(?=")')
[[ -n $cmds ]] || fail "no command table in ring/ctl/ringctl.c"
ss=$(awk -F'\t' '$1 == "SS" && $2 == "COMMANDS" { split($3, w, " "); print w[1] }' "$T/ringctl.1.rec")
synopsis=$(section_text ringctl.1 '^SYNOPSIS$')
for c in $cmds; do
	in_list "$ss" "$c" || bad "ringctl(1): command $c has no subsection under COMMANDS"
	has_word "$synopsis" "$c" || bad "ringctl(1): command $c is not in the SYNOPSIS"
done
# Options: every "-x"/"--name" the parsers compare against, in the page.
whole=$(awk -F'\t' '$1 == "SH" { print $3 }' "$T/ringctl.1.rec")
opts=$(cat "$SRC/ring/ctl/ringctl.c" "$SRC"/ring/ctl/watch*.c 2>/dev/null | grep -oP '"\K--?[a-z][a-z-]*(?=")' | sort -u)
for o in $opts; do
	has_word "$whole" "$o" || bad "ringctl(1): option $o (ring/ctl/ringctl.c) is not documented"
done
injects=$(grep -oP '^\s*X\(\w+, "\K[a-z-]+(?=")' "$SRC/ring/common/control.h")
[[ -n $injects ]] || fail "no RING_INJECTS in ring/common/control.h"
cmdtext=$(section_text ringctl.1 '^COMMANDS$')
for w in $injects; do
	has_word "$cmdtext" "$w" || bad "ringctl(1): inject word $w is not documented"
done

# exit_codes FILE: the EXIT_* values a main defines, with 0 and 1 (which
# every main returns as such).
exit_codes() { { echo 0; echo 1; grep -oP '\bEXIT_[A-Z_]+\s*=\s*\K[0-9]+' "$1"; } | sort -un; }
# documented PAGE: the codes of its EXIT STATUS entries.
documented() { awk -F'\t' '$1 == "TP" && $2 == "EXIT STATUS" { print $4 }' "$T/$1.rec" | sort -un; }
check_exits() { # PAGE SOURCE
	local want have
	want=$(exit_codes "$2") have=$(documented "$1")
	for c in $want; do in_list "$have" "$c" || bad "$1: exit code $c (${2#"$SRC"/}) is not under EXIT STATUS"; done
	for c in $have; do in_list "$want" "$c" || bad "$1: EXIT STATUS lists $c, which ${2#"$SRC"/} does not define"; done
}
check_exits ringctl.1 "$SRC/ring/ctl/ringctl.c"

# ---- ringd(8): flags, signals, exit codes, log events ----

check_exits ringd.8 "$SRC/ring/daemon/main.c"
options=$(section_text ringd.8 '^OPTIONS$')
longs=$(sed -n '/struct option opts\[\]/,/};/p' "$SRC/ring/daemon/main.c" | grep -oP '\{"\K[a-z-]+(?=")')
shorts=$(grep -oP 'getopt_long\([^"]*"\K[^"]+' "$SRC/ring/daemon/main.c" | tr -d ':' | grep -o .)
[[ -n $longs && -n $shorts ]] || fail "no options table or getopt string in ring/daemon/main.c"
for o in $longs; do has_word "$options" "--$o" || bad "ringd(8): --$o is not under OPTIONS"; done
for o in $shorts; do has_word "$options" "-$o" || bad "ringd(8): -$o is not under OPTIONS"; done
signals=$(section_text ringd.8 '^SIGNALS$')
for s in $(grep -ohP '\b(evsignal_new\([^,]+,\s*|signal\()\KSIG[A-Z0-9]+' "$SRC"/ring/daemon/daemon.c "$SRC"/ring/daemon/main.c | sort -u); do
	has_word "$signals" "$s" || bad "ringd(8): $s (handled in ring/daemon/daemon.c) is not under SIGNALS"
done
# Log events: the core's table (name and fields) and the shell's own.
events=$(perl -0777 -ne '
	my ($m) = /#define RING_LOG_EVENTS\(X\)((?:[^\n]*\\\n)*[^\n]*\n)/ or die "no RING_LOG_EVENTS\n";
	$m =~ s/\\\n/ /g;
	while ($m =~ /X\(\s*\w+\s*,\s*"(\w+)"\s*,\s*\d\s*,([^)]*)\)/g) {
		my ($e, $f) = ($1, $2); my @f = $f =~ /"(\w+)"/g; print join(" ", $e, @f), "\n";
	}' "$SRC/ring/core/node.h") || fail "cannot read RING_LOG_EVENTS in ring/core/node.h"
# (The shell's rate limit logs its *_unlogged counts from a table of names.)
shell_events=$({
	grep -h 'ring_log_emit(' "$SRC"/ring/*/*.c | grep -v '^\s*\(void\|int\) ' |
		sed -E 's/.*ring_log_emit\(//; s/, *(false|true).*//' | grep -oP '"\K[a-z_]+(?=")'
	grep -ohP '"\K[a-z_]+_unlogged(?=")' "$SRC"/ring/daemon/daemon.c
} | sort -u)
[[ -n $events && -n $shell_events ]] || fail "found no log events in the sources"
logtext=$(section_text ringd.8 '^LOG EVENTS$')
logtags=$(awk -F'\t' '$1 == "TP" && $2 == "LOG EVENTS" { print $4 }' "$T/ringd.8.rec")
while read -r e fields; do
	has_word "$logtext" "$e" || { bad "ringd(8): log event $e (ring/core/node.h) is not under LOG EVENTS"; continue; }
	# Its fields, as the tag lists them: "event (a, b, c)".
	listed=$(grep -oP "(^|[ ,])\Q$e\E \(\K[^)]*" <<<"$logtags" | head -n 1)
	for f in $fields; do
		has_word "$listed" "$f" || bad "ringd(8): log event $e's field $f is not in its entry ($e ($listed))"
	done
done <<<"$events"
for e in $shell_events; do
	has_word "$logtext" "$e" || bad "ringd(8): log event $e (ring_log_emit in ring/) is not under LOG EVENTS"
done
# No event the code does not log: every name an entry's tag gives is one.
all_events=$(printf '%s\n%s\n' "$(cut -d' ' -f1 <<<"$events")" "$shell_events")
while IFS= read -r e; do
	in_list "$all_events" "$e" || bad "ringd(8) documents a log event the code does not log: $e"
done < <(sed 's/([^)]*)//g' <<<"$logtags" | grep -oE '[a-z][a-z_]*' | sort -u)

# ---- the ring's file: the unit's path is the pages' ----

# The unit reads RING_CONFIG (neither program has a default); ring.conf(5)'s
# SYNOPSIS is that file, the FILES of ringd(8) and ringctl(1) list it, and
# every other /etc/ring path in a page or the unit is one the package ships
# (conf/debian/build-deb.sh installs it: the example) or a key a user makes.
unit=$SRC/conf/ring@.service
cfg=$(sed -n 's/^Environment=RING_CONFIG=//p' "$unit")
[[ $cfg == /etc/ring/?* ]] || bad "conf/ring@.service sets no RING_CONFIG under /etc/ring: '$cfg'"
read -r syn <<<"$(section_text ring.conf.5 '^SYNOPSIS$')" # trimmed
[[ $syn == "$cfg" ]] || bad "ring.conf(5)'s SYNOPSIS is '$syn'; the unit reads $cfg"
for p in ringd.8 ringctl.1; do
	awk -F'\t' -v f="$cfg" '$1 == "TP" && $2 == "FILES" && $4 == f { ok = 1 } END { exit !ok }' "$T/$p.rec" ||
		bad "$p: FILES does not list $cfg, the unit's RING_CONFIG"
done
shipped=$(grep -oP '"\$root/\Ketc/ring/[^"]+' "$SRC/conf/debian/build-deb.sh" | sed 's|^|/|')
[[ -n $shipped ]] || bad "conf/debian/build-deb.sh installs nothing in /etc/ring"
npaths=0
for f in "$MAN/ringd.8" "$MAN/ringctl.1" "$MAN/ring.conf.5" "$unit"; do
	while read -r path; do
		npaths=$((npaths + 1))
		[[ $path == "$cfg" || $path == *.key ]] || in_list "$shipped" "$path" ||
			bad "${f##*/} names $path: not the unit's $cfg, nor what the package ships (${shipped//$'\n'/ }), nor a key"
	done < <(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$f" | grep -oE '/etc/ring/[][A-Za-z0-9_.*-]*' | sort -u)
done

# ---- rendering, versions ----

version=$(sed -n 's/^VERSION *= *//p' "$SRC/Makefile")
[[ -n $version ]] || fail "no VERSION in the Makefile"
for p in ringd.8 ringctl.1 ring.conf.5; do
	w=$(groff -ww -man -Tutf8 "$MAN/$p" 2>&1 >/dev/null)
	[[ -z $w ]] || bad "$p: groff -ww warns: $w"
	w=$(MANWIDTH=80 man --warnings -l "$MAN/$p" 2>&1 >/dev/null)
	[[ -z $w ]] || bad "$p: man -l warns: $w"
	grep -q "^\.TH [^ ]* [0-9] [^ ]* \"ring $version\"" "$MAN/$p" ||
		bad "$p: .TH does not say \"ring $version\" (Makefile VERSION): $(grep '^\.TH' "$MAN/$p")"
done
rev=
[[ -e $SRC/.git ]] && rev=$(git -C "$SRC" describe --always --dirty --abbrev=7 --exclude='*' 2>/dev/null)
for prog in "$RINGD" "$RINGCTL"; do
	got=$("$prog" --version) || bad "${prog##*/} --version failed"
	want="${prog##*/} $version${rev:+ (git $rev)}"
	[[ $got == "$want" ]] || bad "${prog##*/} --version says '$got', want '$want' (rebuild?)"
done

if ((${#problems[@]})); then
	printf '  %s\n' "${problems[@]}"
	fail "${#problems[@]} drift(s) between the man pages and the code"
fi
say "| the unit's $cfg, and $npaths /etc/ring paths of the pages and the unit, agree"
say "| $nkeys keys, $(wc -w <<<"$cmds") commands, $(wc -w <<<"$opts") ringctl options, $(wc -l <<<"$events") + $(wc -w <<<"$shell_events") log events checked"
pass "the man pages match the code and render without warnings"
