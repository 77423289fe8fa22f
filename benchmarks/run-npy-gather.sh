#!/usr/bin/env bash
# Sluice gather vs a plain Java copy loop over a page-cached 2,000,000 x 256-byte .npy:
# 5 alternating rounds per order, prints each ratio and the median (README "From NumPy").
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -o package -DskipTests -pl benchmarks -am
echo "load before the run: $(uptime)"
java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -cp benchmarks/target/benchmarks.jar dev.sluice.benchmarks.NpyGatherRatio "${1:-5}"
