#!/usr/bin/env bash
# The docs' samples of `ringd --check` are real output, not typed: each block
# under a marker line `<!-- sample: ringd ARGS -->` in README.md and
# docs/configuration.md must be what ring/ringd ARGS prints, run from a
# scratch copy of conf/ whose root reads as /home/you/ring (so no state_dir
# or key of this machine shows). In a block, a line "$ ..." is the command
# shown to the reader and is skipped, and a line "..." (indented or not)
# stands for any number of lines. Fails, printing the real output, when a
# sample has drifted; --print shows every sample's real output.
# Usage: test/house/samples.sh [--print]   (after make: it runs ring/ringd)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
[ -x ring/ringd ] && [ -x ring/ringctl ] || { echo "samples: build ring/ringd and ring/ringctl first (make)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/ring-samples.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/conf" && cp conf/*.ini "$tmp/conf/" || exit 2
# hosts5.ini names prod.key beside it (README step 1 makes it with keygen);
# a fixed one here, so that the key fingerprint shown is the same each run.
(umask 077 && echo 'sample-key-for-the-docs-not-a-secret-0123456789abcdef' >"$tmp/conf/prod.key") || exit 2
python3 - "$tmp" "$root/ring/ringd" "${1:-}" README.md docs/configuration.md <<'EOF'
import re, shlex, subprocess, sys
tmp, ringd, mode, docs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
marker = re.compile(r'^<!-- sample: ringd (.*) -->$')

def matches(want, got):
    """want's lines equal got's, a '...' line standing for any run of lines."""
    if not want:
        return not got
    if want[0].strip() == '...':
        return any(matches(want[1:], got[k:]) for k in range(len(got) + 1))
    return bool(got) and want[0] == got[0] and matches(want[1:], got[1:])

bad = n = 0
for doc in docs:
    lines = open(doc).read().split('\n')
    for i, line in enumerate(lines):
        m = marker.match(line)
        if not m:
            continue
        n += 1
        if i + 1 >= len(lines) or not lines[i + 1].startswith('```'):
            print(f'samples: {doc}:{i + 1}: the marker is not followed by a ``` block')
            bad += 1
            continue
        end = next((j for j in range(i + 2, len(lines)) if lines[j].startswith('```')), None)
        if end is None:
            print(f'samples: {doc}:{i + 1}: the block never ends')
            bad += 1
            continue
        want = [l for l in lines[i + 2:end] if not l.startswith('$ ')]
        args = shlex.split(m.group(1))
        r = subprocess.run([ringd] + args, cwd=tmp, capture_output=True, text=True)
        got = (r.stdout + r.stderr).replace(tmp, '/home/you/ring').rstrip('\n').split('\n')
        if mode == '--print':
            print(f'--- {doc}:{i + 1}: ringd {m.group(1)} (exit {r.returncode})')
            print('\n'.join(got))
        if r.returncode != 0 or not matches(want, got):
            bad += 1
            print(f'samples: {doc}:{i + 1}: the sample of `ringd {m.group(1)}` is not what it '
                  f'prints (exit {r.returncode}); it prints:')
            print('\n'.join('    ' + l for l in got))
if n == 0:
    print('samples: no <!-- sample: ringd ... --> marker in ' + ', '.join(docs))
    sys.exit(2)
if bad:
    sys.exit(1)
print(f'samples: {n} samples of ringd --check in the docs are what it prints')
EOF
