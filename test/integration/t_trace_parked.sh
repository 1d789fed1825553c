#!/bin/bash
# ringctl trace and timeline after a real kill -9 of the holder of a
# parked token (a quiet ring),
# with the default logs and with -v, default timings, and a graceful
# restart before it that must not count: trace_crash.sh says what is checked.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace_crash.sh"
RESULTS=()
crash_scenario parked 0
crash_scenario parked 1
for r in "${RESULTS[@]}"; do echo "| $r"; done
pass "parked ring: crash dated and recovery timed from the logs alone, with and without -v"
