#!/usr/bin/env bash
# The cost of --cache on a short run (docs/benchmarks.md, "Opening the cache"): per round, on a
# 20,000-row Parquet file, an uncached `sluice read`, a first cached run (creates the cache) and a
# second cached run (opens it), alternated; the wall time of each process and the time its index
# open took, or for a sealed cache the open of its segments without the index (the debug lines
# `--verbose` prints), then the medians.
# Usage: benchmarks/cache-open.sh [DIR] [rows] [rounds]   (after mvn -B -q package -DskipTests)
set -euo pipefail
dir=${1:-/tmp/sluice-cache-open}
rows=${2:-20000}
rounds=${3:-7}
jar=${SLUICE_JAR:-examples/target/sluice.jar}
mkdir -p "$dir"
file=$dir/rows.parquet
cache=$dir/caches
java -jar "$jar" generate --format parquet --rows "$rows" --dim 16 --force "$file" >/dev/null
echo "date: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(java -version 2>&1 | head -1)"
echo "load before: $(uptime)"

ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# one run: prints "<wall ms> <index open ms or ->"
run() {
  local t0 log
  t0=$(date +%s%N)
  log=$(java -jar "$jar" read --verbose "$@" "$file" 2>&1 >/dev/null)
  local wall
  wall=$(ms "$t0")
  local open
  open=$(sed -n -e 's/.*cache index .* \(opened\|created\) in \([0-9]*\) ms.*/\2/p' \
    -e 's/.*sealed: .* without the index in \([0-9]*\) ms.*/\1/p' <<<"$log" | head -1)
  echo "$wall ${open:--}"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }

: >"$dir/uncached" ; : >"$dir/first" ; : >"$dir/second"
for r in $(seq 1 "$rounds"); do
  rm -rf "$cache"
  u=$(run); f=$(run --cache="$cache"); s=$(run --cache="$cache")
  echo "round $r: uncached ${u% *} ms; first cached ${f% *} ms (index created in ${f#* } ms); second cached ${s% *} ms (opened in ${s#* } ms)"
  echo "$u" >>"$dir/uncached"; echo "$f" >>"$dir/first"; echo "$s" >>"$dir/second"
done
echo "load after: $(uptime)"
for k in uncached first second; do
  echo "median $k: $(cut -d' ' -f1 "$dir/$k" | median) ms wall$( [ "$k" = uncached ] || echo ", index $(cut -d' ' -f2 "$dir/$k" | median) ms")"
done
