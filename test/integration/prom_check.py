#!/usr/bin/env python3
# Strict check of a Prometheus text exposition (format 0.0.4) read from
# stdin, with the parser Prometheus users' own tooling uses (Debian's
# python3-prometheus-client): every line must parse, and the families ring
# promises must be there with the right types. Prints one line per problem
# and exits 1 on any; prints "families N samples M" and exits 0 otherwise.
# With --rules FILE (Prometheus rule file, YAML), every ring_ metric an
# expression names must be a sample name the exposition really has, so an
# alert cannot silently watch a metric that was renamed.
import re
import sys

from prometheus_client.parser import text_string_to_metric_families

# Families every member exposes and their types (names as the parser
# reports them: a counter's family drops its _total).
WANT = {
    "ring_member_info": "gauge",
    "ring_state": "gauge",
    "ring_epoch": "gauge",
    "ring_fence": "gauge",
    "ring_queue_length": "gauge",
    "ring_token_seen_seconds_ago": "gauge",
    "ring_cs_entries": "counter",
    "ring_tokens_passed": "counter",
    "ring_retransmits": "counter",
    "ring_datagrams_received": "counter",
    "ring_datagrams_sent": "counter",
    "ring_grant_wait_seconds": "histogram",
    "ring_hold_seconds": "histogram",
}


def rule_metrics(path):
    """The ring_ metric names every expression in a rule file uses."""
    import yaml  # Debian's python3-yaml

    with open(path) as f:
        doc = yaml.safe_load(f)
    names = set()
    for group in doc["groups"]:
        for rule in group["rules"]:
            names.update(re.findall(r"\bring_[a-z0-9_]+", rule["expr"]))
    return names


def main():
    rules = None
    if len(sys.argv) == 3 and sys.argv[1] == "--rules":
        rules = sys.argv[2]
    elif len(sys.argv) != 1:
        print("usage: prom_check.py [--rules FILE] < exposition")
        return 2
    text = sys.stdin.read()
    bad = []
    try:
        fams = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError and friends
        print(f"not exposition format: {e}")
        return 1
    got = {f.name: f for f in fams}
    for name, typ in WANT.items():
        if name not in got:
            bad.append(f"missing family {name}")
        elif got[name].type != typ:
            bad.append(f"{name} is {got[name].type}, want {typ}")
    samples = 0
    for f in fams:
        if not f.name.startswith("ring_"):
            bad.append(f"family {f.name} without the ring_ prefix")
        if f.type == "untyped":
            bad.append(f"family {f.name} has no TYPE")
        for s in f.samples:
            samples += 1
            if f.type == "counter" and not s.name.endswith("_total"):
                bad.append(f"counter sample {s.name} without _total")
            if s.value < 0 and f.type in ("counter", "histogram"):
                bad.append(f"{s.name}{s.labels} negative: {s.value}")
        if f.type == "histogram":
            buckets = [s for s in f.samples if s.name.endswith("_bucket")]
            les = [s.labels.get("le") for s in buckets]
            if not les or les[-1] != "+Inf":
                bad.append(f"{f.name}: last bucket is not le=+Inf")
            vals = [s.value for s in buckets]
            if vals != sorted(vals):
                bad.append(f"{f.name}: buckets not cumulative")
            count = [s.value for s in f.samples if s.name.endswith("_count")]
            if not count or not vals or count[0] != vals[-1]:
                bad.append(f"{f.name}: _count differs from the +Inf bucket")
    if rules:
        have = {s.name for f in fams for s in f.samples}
        for name in sorted(rule_metrics(rules)):
            if name not in have:
                bad.append(f"{rules} uses {name}, which no sample is called")
    for b in bad:
        print(b)
    if not bad:
        print(f"families {len(fams)} samples {samples}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
