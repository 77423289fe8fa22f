#!/usr/bin/env bash
# Arrow C++'s Parquet reader (arrow-dataset 18.3.0 JNI) versus Sluice's columnar path, both JVMs
# pinned to one core (taskset -c 0), 5 alternating rounds, median ratio Sluice / Arrow.
#
#   benchmarks/arrow-cpp-parquet/run.sh [LIST|FLAT] [rounds]
#
# Needs: the Sluice benchmarks jar (mvn -B -q clean package -DskipTests -pl benchmarks -am, from
# the repository root) and this project built (mvn -B -q package, here). The data file
# (1,000,000 rows, x = 64 float32, snappy) is generated on first use under $TMPDIR/sluice-bench.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
layout="${1:-LIST}"
rounds="${2:-5}"
jar="$root/benchmarks/target/benchmarks.jar"
[ -f "$jar" ] || (cd "$root" && mvn -B -q clean package -DskipTests -pl benchmarks -am)
[ -d "$here/target/lib" ] || (cd "$here" && mvn -B -q package)
flags="--add-opens=java.base/java.nio=ALL-UNNAMED --enable-native-access=ALL-UNNAMED -Xms2g -Xmx2g -XX:+AlwaysPreTouch"
tmp="${TMPDIR:-/tmp}"
file="$tmp/sluice-bench/$(echo "$layout" | tr 'A-Z' 'a-z')-1000000x64-rg134217728-label-score-name.parquet"
# generate the file (and warm the page cache) with zero measured rounds
java $flags -cp "$jar" dev.sluice.benchmarks.parquet.QuickRead "$layout" 1000000 64 0 pages >/dev/null 2>&1
echo "load before: $(uptime)"
# each JVM: best of 3 measured reads after 2 warm-up reads; "wall" = rows / elapsed seconds,
# "cpu" = rows / CPU seconds of the whole process (robust against other jobs on the machine)
ratios=()
cratios=()
best() { sort -n | tail -1; }
for r in $(seq 1 "$rounds"); do
  aout=$(taskset -c 0 java $flags -cp "$here/target/classes:$here/target/lib/*" \
      dev.sluice.benchmarks.arrowcpp.ArrowParquetRead "$file" 2 3 2>/dev/null)
  sout=$(taskset -c 0 java $flags -Dfile="$file" -cp "$jar" dev.sluice.benchmarks.parquet.QuickRead \
      "$layout" 1000000 64 3 sluice 2>/dev/null)
  a=$(echo "$aout" | awk '{print $3}' | best); ac=$(echo "$aout" | awk '{print $4}' | best)
  s=$(echo "$sout" | awk '{print $3}' | best); sc=$(echo "$sout" | awk '{print $4}' | best)
  ratio=$(awk -v s="$s" -v a="$a" 'BEGIN { printf "%.2f", s / a }')
  cratio=$(awk -v s="$sc" -v a="$ac" 'BEGIN { printf "%.2f", s / a }')
  echo "round $r: arrow-cpp $a rows/s (cpu $ac), sluice $s rows/s (cpu $sc), sluice/arrow wall $ratio cpu $cratio"
  ratios+=("$ratio")
  cratios+=("$cratio")
done
med() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "layout $layout: median sluice/arrow-cpp over $rounds rounds: wall $(printf '%s\n' "${ratios[@]}" | med), cpu $(printf '%s\n' "${cratios[@]}" | med)"
echo "load after: $(uptime)"
