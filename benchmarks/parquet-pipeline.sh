#!/usr/bin/env bash
# Parquet through a Sluice pipeline versus Arrow C++'s Parquet reader and versus ParquetDataset.batches,
# every contender a JVM pinned to one core (taskset -c 0), the contenders alternating within each
# round; prints per-round figures and the median ratios over the rounds.
#
#   benchmarks/parquet-pipeline.sh [FLAT|LIST|both] [rounds] [batch] [warm-up passes]
#
# Files (generated on first use under ${TMPDIR:-/tmp}/sluice-bench, never committed): 1,000,000 rows,
# snappy, of x = 64 float32 (FLAT: 64 float columns x0..x63; LIST: one list column with its shape
# declared), label int64, score a nullable float32 (null every tenth row) and name a string.
#
# Contenders, each: 8 warm-up passes (the fourth argument), then 8 measured passes, median records/s,
# and the process CPU time per record over the measured passes (all threads, so Arrow's native
# threads count too). On one core the JIT compiles the decoder's and the gather's loops for the
# first six or so passes of these files, at about half speed; with one warm-up pass the medians fall
# among those passes and measure the compiler as much as the reader:
#   arrow-cpp   Arrow C++'s Parquet reader through arrow-dataset's JNI (benchmarks/arrow-cpp-parquet)
#   pipeline    sluice bench FILE --batch B --prefetch 0  (Pipeline.from(parquet).shard(1, 0).batch(B))
#   shuffled    the same with --shuffle (split order + 10,000-row window shuffle)
#   batches     ParquetDataset.batches(B) (benchmarks' BatchesBench)
# (no prefetch stage: on one core a prefetch thread only adds hand-offs; the comparison is of the
# decoding paths)
# Ratios: pipeline / arrow-cpp (targets: >= 1.0 FLAT, >= 2.0 LIST), pipeline / batches (>= 0.9),
# shuffled / pipeline (>= 0.8).
#
# Needs the jars: mvn -B -q package -DskipTests (repository root) and, once, mvn -B -q package in
# benchmarks/arrow-cpp-parquet (the script builds what is missing).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
layouts="${1:-both}"
rounds="${2:-5}"
batch="${3:-1024}"
warmup="${4:-8}"
[ "$layouts" = both ] && layouts="FLAT LIST"
sluice="$root/examples/target/sluice.jar"
bench="$root/benchmarks/target/benchmarks.jar"
arrow="$here/arrow-cpp-parquet"
[ -f "$sluice" ] && [ -f "$bench" ] || (cd "$root" && mvn -B -q package -DskipTests)
[ -d "$arrow/target/lib" ] || (cd "$arrow" && mvn -B -q package)
flags="-Xms1g -Xmx1g -XX:+AlwaysPreTouch"
arrowflags="--add-opens=java.base/java.nio=ALL-UNNAMED --enable-native-access=ALL-UNNAMED $flags"
tmp="${TMPDIR:-/tmp}"

json() { sed -n 's/.*"'"$1"'":\([0-9.]*\).*/\1/p' | tail -1; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.3f\n", v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

echo "date: $(date -u +%Y-%m-%dT%H:%MZ), batch $batch, $warmup warm-up passes, $rounds rounds, $(nproc) cores, $(java -version 2>&1 | head -1)"
for layout in $layouts; do
  lower=$(echo "$layout" | tr 'A-Z' 'a-z')
  file="$tmp/sluice-bench/$lower-1000000x64-rg134217728-label-score-name.parquet"
  # generate the file (and warm the page cache) with zero measured rounds
  java -Xmx1g -cp "$bench" dev.sluice.benchmarks.parquet.QuickRead "$layout" 1000000 64 0 pages >/dev/null 2>&1
  echo "== $layout: $file ($(du -h "$file" | cut -f1))"
  echo "load before: $(uptime)"
  r_arrow=(); r_batches=(); r_shuffle=()
  for r in $(seq 1 "$rounds"); do
    a=$(taskset -c 0 java $arrowflags -cp "$arrow/target/classes:$arrow/target/lib/*" \
        dev.sluice.benchmarks.arrowcpp.ArrowParquetRead "$file" "$warmup" 8 2>/dev/null)
    a_rate=$(echo "$a" | awk '{ print $3 }' | median)
    a_cpu=$(echo "$a" | awk '{ print 1e9 / $4 }' | median)
    p=$(taskset -c 0 java $flags -jar "$sluice" bench "$file" --batch "$batch" --warmup "$warmup" --epochs 8 --prefetch 0 --json)
    p_rate=$(echo "$p" | json recordsPerSecond); p_cpu=$(echo "$p" | json cpuSecondsPerMillionRecords | awk '{ print $1 * 1000 }')
    s=$(taskset -c 0 java $flags -jar "$sluice" bench "$file" --batch "$batch" --warmup "$warmup" --epochs 8 --prefetch 0 --shuffle --json)
    s_rate=$(echo "$s" | json recordsPerSecond); s_cpu=$(echo "$s" | json cpuSecondsPerMillionRecords | awk '{ print $1 * 1000 }')
    b=$(taskset -c 0 java $flags -cp "$bench" dev.sluice.benchmarks.parquet.BatchesBench "$file" "$batch" 8 "$warmup")
    b_rate=$(echo "$b" | json recordsPerSecond); b_cpu=$(echo "$b" | json cpuSecondsPerMillionRecords | awk '{ print $1 * 1000 }')
    r_arrow+=("$(ratio "$p_rate" "$a_rate")"); r_batches+=("$(ratio "$p_rate" "$b_rate")")
    r_shuffle+=("$(ratio "$s_rate" "$p_rate")")
    printf 'round %d records/s (CPU ns/record): arrow-cpp %.0f (%.0f), pipeline %.0f (%.0f), shuffled %.0f (%.0f), batches %.0f (%.0f); pipeline/arrow-cpp %s, pipeline/batches %s, shuffled/pipeline %s\n' \
      "$r" "$a_rate" "$a_cpu" "$p_rate" "$p_cpu" "$s_rate" "$s_cpu" "$b_rate" "$b_cpu" \
      "${r_arrow[-1]}" "${r_batches[-1]}" "${r_shuffle[-1]}"
  done
  echo "$layout medians over $rounds rounds: pipeline/arrow-cpp $(printf '%s\n' "${r_arrow[@]}" | median)," \
    "pipeline/batches $(printf '%s\n' "${r_batches[@]}" | median), shuffled/pipeline $(printf '%s\n' "${r_shuffle[@]}" | median)"
  echo "load after: $(uptime)"
done
