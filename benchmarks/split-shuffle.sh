#!/usr/bin/env bash
# The block shuffle of a split source against the unshuffled read of the same file, through the
# command line (sluice bench), each run a JVM pinned to one core (taskset -c 0), shuffled and
# unshuffled alternating within each round; prints per-round figures and the median ratio.
#
#   benchmarks/split-shuffle.sh [rounds, 5] [batch, 1024] [warm-up passes, 8]
#
# Files (generated on first use under ${TMPDIR:-/tmp}/sluice-bench, never committed): the Parquet
# pipeline benchmark's 1,000,000-row files (x = 64 float32 as 64 columns (FLAT) or one list column
# (LIST), label int64, score nullable float32, name string; snappy), with 128 MiB row groups, and
# FLAT and LIST written as one row group.
#   unshuffled  sluice bench FILE --batch B --prefetch 0 --epochs 8 --warmup W
#   shuffled    the same with --shuffle (blocks of every row group in a new order, 10,000-row window)
# Ratio: shuffled / unshuffled records per second (target >= 0.75); CPU ns per record beside.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
rounds="${1:-5}"
batch="${2:-1024}"
warmup="${3:-8}"
sluice="$root/examples/target/sluice.jar"
bench="$root/benchmarks/target/benchmarks.jar"
[ -f "$sluice" ] && [ -f "$bench" ] || (cd "$root" && mvn -B -q package -DskipTests)
flags="-Xms1g -Xmx1g -XX:+AlwaysPreTouch"

json() { sed -n 's/.*"'"$1"'":\([0-9.]*\).*/\1/p' | tail -1; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.3f\n", v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
run() { taskset -c 0 java $flags -jar "$sluice" bench "$1" --batch "$batch" --warmup "$warmup" --epochs 8 --prefetch 0 $2 --json; }

echo "date: $(date -u +%Y-%m-%dT%H:%MZ), batch $batch, $warmup warm-up passes, $rounds rounds, $(nproc) cores, $(java -version 2>&1 | head -1)"
for spec in "FLAT 134217728" "LIST 134217728" "FLAT 1099511627776" "LIST 1099511627776"; do
  set -- $spec
  file=$(java -Xmx1g -cp "$bench" dev.sluice.benchmarks.parquet.MakeFile "$1" 1000000 64 "$2")
  echo "== $1, row groups of $2 bytes: $file ($(du -h "$file" | cut -f1)); load before: $(uptime | sed 's/.*average: //')"
  rs=()
  for r in $(seq 1 "$rounds"); do
    p=$(run "$file" ""); p_rate=$(echo "$p" | json recordsPerSecond); p_cpu=$(echo "$p" | json cpuSecondsPerMillionRecords | awk '{ print $1 * 1000 }')
    s=$(run "$file" --shuffle); s_rate=$(echo "$s" | json recordsPerSecond); s_cpu=$(echo "$s" | json cpuSecondsPerMillionRecords | awk '{ print $1 * 1000 }')
    rs+=("$(ratio "$s_rate" "$p_rate")")
    printf 'round %d records/s (CPU ns/record): unshuffled %.0f (%.0f), shuffled %.0f (%.0f); shuffled/unshuffled %s\n' \
      "$r" "$p_rate" "$p_cpu" "$s_rate" "$s_cpu" "${rs[-1]}"
  done
  echo "$1 $2: median shuffled/unshuffled over $rounds rounds: $(printf '%s\n' "${rs[@]}" | median); load after: $(uptime | sed 's/.*average: //')"
done
