#!/usr/bin/env bash
# The shared cache's benchmarks (docs/benchmarks.md, "Shared cache"): a warm cached pass over a
# 1,000,000-row zstd Parquet file against the npy index path and the uncached columnar pipeline,
# then a map of about 5 us per element before the cache against the same pipeline without it.
# Usage: benchmarks/cache-bench.sh [DIR] [rows] [rounds]   (after mvn -B -q package -DskipTests)
set -euo pipefail
dir=${1:-/tmp/sluice-cache-bench}
rows=${2:-1000000}
rounds=${3:-5}
bench=benchmarks/target/benchmarks.jar
# Chronicle Map, the cache's index, needs these (the sluice jar's manifest carries them)
flags="--add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED
  --add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
  --enable-native-access=ALL-UNNAMED -Dchronicle.analytics.disable=true"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(java -version 2>&1 | head -1)"
echo "load before: $(uptime)"
# shellcheck disable=SC2086
java -Xms2g -Xmx2g -XX:+AlwaysPreTouch $flags -cp "$bench" dev.sluice.benchmarks.CacheBench parquet "$dir" "$rows" "$rounds"
echo "load between: $(uptime)"
# shellcheck disable=SC2086
java -Xms2g -Xmx2g -XX:+AlwaysPreTouch $flags -cp "$bench" dev.sluice.benchmarks.CacheBench map "$dir" $((rows / 5)) "$rounds"
echo "load after: $(uptime)"
