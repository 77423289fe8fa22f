#!/bin/sh
# Sluice vs PyTorch DataLoader on a page-cached 2,000,000-row .npy directory (x float32[64], label).
# Needs Debian's python3-torch (apt-get install python3-torch) and numpy in /usr/bin/python3.
# Usage: benchmarks/torch_compare.sh [extra args for torch_compare.py]
set -eu
cd "$(dirname "$0")/.."
if [ ! -f examples/target/sluice.jar ]; then
  mvn -B -q -o package -DskipTests -pl examples -am
fi
echo "uptime before: $(uptime)"
/usr/bin/python3 benchmarks/torch_compare.py "$@"
echo "uptime after: $(uptime)"
