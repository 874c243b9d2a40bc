#!/bin/sh
# smoke.sh FUZZER RUNS SEEDS ARTIFACTS: RUNS inputs from the seed folder
# with a fixed random seed, so the same build always tries the same inputs
# (new ones go to a scratch corpus; the seeds stay as they are). A crash,
# leak, sanitizer report, 10 s hang or 2 GB input fails the test and leaves
# the input in ARTIFACTS (crash-*, timeout-*, oom-*).
set -e
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$4"
"$1" -seed=1 -runs="$2" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$4/" "$work" "$3"
