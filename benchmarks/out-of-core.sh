#!/usr/bin/env bash
# Out-of-core shuffles (docs/benchmarks.md, "Out of core"): an npy dataset 1.5x the memory of a
# cgroup (v1 memory controller) that every read runs in, so the page cache cannot hold it; per round
# a sequential pass and a block shuffle (--shuffle-mode blocks) alternated, each from a cold cache
# (the cgroup's pages reclaimed with memory.force_empty, which touches no other process's cache),
# then a capped global shuffle (--shuffle-mode global, --stop-after batches) and the block shuffle's
# quality (3 epochs of rank 1 of 4). Deletes the dataset and the cgroup at the end.
# Usage: benchmarks/out-of-core.sh [DIR] [limit GiB] [rounds] [global batches]
#        (as root, after mvn -B -q package -DskipTests)
set -euo pipefail
dir=${1:-/tmp/sluice-out-of-core}
limit_gib=${2:-3}
rounds=${3:-3}
global_batches=${4:-40}
jar=${SLUICE_JAR:-examples/target/sluice.jar}
parent=/sys/fs/cgroup/memory$(awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup)
cg=$parent/sluice-out-of-core
mkdir -p "$cg"
echo $((limit_gib << 30)) > "$cg/memory.limit_in_bytes"
cleanup() { rm -rf "$dir"; rmdir "$cg" 2>/dev/null || true; }
trap cleanup EXIT

# java in the cgroup: the JVM, its heap and the pages of the file it maps all count against the limit
in_cgroup() { sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" java -Xmx512m -jar "$jar" "$@"; }
cold() { echo 0 > "$cg/memory.force_empty"; }
# x float32[64] + label int64: 264 bytes a row
rows=$(( (limit_gib << 30) * 3 / 2 / 264 ))
in_cgroup generate "$dir" --rows "$rows" --dim 64 --format npy --force
echo "date: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM," \
  "cgroup limit ${limit_gib} GiB, data $(du -sh "$dir" | cut -f1), $(java -version 2>&1 | head -1)"
echo "load before: $(uptime)"

# what --shuffle (auto) chose in this cgroup: the first batch of each mode, compared
first() { in_cgroup read "$dir" --batch 256 --shuffle --shuffle-mode "$1" --stop-after 1 --print-indices | head -1; }
if [ "$(first auto)" = "$(first blocks)" ]; then echo "--shuffle (auto) chose: blocks"
elif [ "$(first auto)" = "$(first global)" ]; then echo "--shuffle (auto) chose: global"; fi

# one read: prints "<records/s>" from the --json line
rate() {
  cold
  in_cgroup read "$dir" --batch 256 --json "$@" | tail -1 \
    | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(round(d["examples"] / d["seconds"]))'
}
for r in $(seq 1 "$rounds"); do
  seq_rate=$(rate)
  blocks_rate=$(rate --shuffle --shuffle-mode blocks)
  echo "round $r: sequential $seq_rate records/s, blocks $blocks_rate records/s," \
    "ratio $(python3 -c "print(round($blocks_rate / $seq_rate, 2))")"
done
echo "global (first $global_batches batches): $(rate --shuffle --shuffle-mode global --stop-after "$global_batches")" \
  "records/s"
cold
in_cgroup read "$dir" --batch 256 --shuffle --shuffle-mode blocks --epochs 3 --rank 1 --world 4 --quality | tail -6
echo "load after: $(uptime)"
