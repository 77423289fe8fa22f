#!/usr/bin/env bash
# sluice bench versus Hardwood's column reader (dev.hardwood:hardwood-core, Java 21+) on one Parquet
# file, both on the same JDK (21 or newer), the two alternating within each round; prints each round's
# figures and the median records/s, CPU-s per million records and ratio over the rounds.
#
#   benchmarks/hardwood.sh FILE [rounds] [threads] [epochs]
#
# threads = 1: both JVMs pinned to one core (taskset -c 1), sluice with --num-workers 1 and Hardwood
# with a one-thread context; threads = N > 1: unpinned, --num-workers N and an N-thread context.
# Each contender: 4 warm-up passes then `epochs` measured passes (default 6), median records/s.
# Hardwood reads every column with ColumnReaders over ColumnProjection.all() and folds every value into
# a checksum (benchmarks/hardwood/HardwoodScan.java, compiled here with javac --release 21 against the
# jars in ~/.m2; fetch them once with
# mvn dependency:get -Dartifact=dev.hardwood:hardwood-core:1.0.1.Final). Hardwood is no dependency of
# any module. Needs the sluice jar: mvn -B -q package -DskipTests (repository root), or SLUICE_JAR=path.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
file="$1"; rounds="${2:-5}"; threads="${3:-1}"; epochs="${4:-6}"
jar="${SLUICE_JAR:-$root/examples/target/sluice.jar}"
java_home="${JAVA21_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
java="$java_home/bin/java"
m2="${M2_REPO:-$HOME/.m2/repository}"
cp="$m2/dev/hardwood/hardwood-core/1.0.1.Final/hardwood-core-1.0.1.Final.jar"
for a in org/xerial/snappy/snappy-java com/github/luben/zstd-jni org/lz4/lz4-java; do
  dep="$(find "$m2/$a" -name '*.jar' ! -name '*sources*' | sort -V | tail -1)"
  cp="$cp:$dep"
done
classes="${TMPDIR:-/tmp}/sluice-hardwood-classes"
mkdir -p "$classes"
"$java_home/bin/javac" --release 21 -cp "$cp" -d "$classes" "$here/hardwood/HardwoodScan.java"
pin=(); [ "$threads" = 1 ] && pin=(taskset -c 1)
heap=(-Xms2g -Xmx2g -XX:+AlwaysPreTouch)
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)  file: $file  threads: $threads"
hw_rates=(); sl_rates=(); hw_cpu=(); sl_cpu=(); ratios=()
median() { printf "%s\n" "$@" | sort -g | awk '{a[NR]=$1} END {printf "%.4g\n", (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for r in $(seq 1 "$rounds"); do
  hw="$("${pin[@]}" "$java" "${heap[@]}" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -cp "$cp:$classes" \
      HardwoodScan "$file" $((epochs + 3)) "$threads" 2>/dev/null | tail -n "$epochs")"
  hw_rate="$(median $(awk '{print $6}' <<<"$hw"))"
  hw_c="$(median $(awk '{print $8}' <<<"$hw"))"
  sl="$("${pin[@]}" "$java" "${heap[@]}" -jar "$jar" bench "$file" \
      --warmup 4 --epochs "$epochs" --prefetch 0 --num-workers "$threads" 2>&1)"
  sl_rate="$(sed -n 's/^median \([0-9]*\) records.*/\1/p' <<<"$sl")"
  sl_c="$(sed -n 's/.*process CPU \([0-9.]*\) s per million.*/\1/p' <<<"$sl")"
  ratio="$(awk -v a="$sl_rate" -v b="$hw_rate" 'BEGIN {printf "%.2f", a / b}')"
  echo "round $r: hardwood $hw_rate records/s ($hw_c CPU-s/M)  sluice $sl_rate records/s ($sl_c CPU-s/M)  ratio $ratio"
  hw_rates+=("$hw_rate"); sl_rates+=("$sl_rate"); hw_cpu+=("$hw_c"); sl_cpu+=("$sl_c"); ratios+=("$ratio")
done
echo "median: hardwood $(median "${hw_rates[@]}") records/s ($(median "${hw_cpu[@]}") CPU-s/M)" \
  " sluice $(median "${sl_rates[@]}") records/s ($(median "${sl_cpu[@]}") CPU-s/M)" \
  " ratio $(median "${ratios[@]}")  load after: $(cut -d' ' -f1-3 /proc/loadavg)"
