#!/usr/bin/env bash
# Writing shards from Spark (docs/benchmarks.md, "Writing shards from Spark"): one cached DataFrame of
# ROWS x 64 float32 written by a local Spark (local[2]) as Sluice shards and with Spark's Parquet
# writer, alternating, and `sluice convert --to shards --workers 2` of the same rows from Parquet;
# wall and process CPU time per million rows, medians of ROUNDS rounds (SparkWriterBench).
# Usage: benchmarks/spark-writer.sh [DIR] [ROWS] [ROUNDS]   (from the repository root; builds first;
# BENCH_JAVA_OPTS adds JVM options, e.g. -XX:StartFlightRecording=filename=spark-writer.jfr)
set -euo pipefail
dir=${1:-/tmp/sluice-spark-writer}
rows=${2:-1000000}
rounds=${3:-5}
mvn -B -q package dependency:build-classpath -pl examples,benchmarks -am -DskipTests \
  -Dmaven.javadoc.skip -Dcheckstyle.skip -Dmaven.source.skip -Dmdep.outputFile=target/classpath.txt
# the opens Spark's launcher adds (JavaModuleOptions)
opens=""
for p in java.lang java.lang.invoke java.lang.reflect java.io java.net java.nio java.util java.util.concurrent \
    java.util.concurrent.atomic jdk.internal.ref sun.nio.ch sun.nio.cs sun.security.action sun.util.calendar; do
  opens="$opens --add-opens=java.base/$p=ALL-UNNAMED"
done
echo "date: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(free -g | awk '/^Mem/ {print $2 + 1}') GiB, $(java -version 2>&1 | head -1)"
echo "load before: $(uptime)"
# shellcheck disable=SC2086
java -Xms4g -Xmx4g -XX:+AlwaysPreTouch ${BENCH_JAVA_OPTS:-} $opens -Djdk.reflect.useDirectMethodHandle=false \
  -Dio.netty.tryReflectionSetAccessible=true -Dchronicle.analytics.disable=true \
  -cp "benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)" \
  dev.sluice.benchmarks.SparkWriterBench "$dir" "$rows" 64 "$rounds" examples/target/sluice.jar
echo "load after: $(uptime)"
