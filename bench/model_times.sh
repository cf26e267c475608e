#!/usr/bin/env bash
# Forward and backward time of every model of models/ at batch 8 on the CPU
# (build/tools/time, TRAIN phase, --stage=dummy), as a markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "| model | forward ms | backward ms | forward+backward ms |"
echo "|---|---|---|---|"
for dir in models/*/; do
  name=$(basename "$dir")
  net="$dir/train_val.prototxt"
  [ -f "$net" ] || continue
  log=$(./build/tools/time --model="$net" --stage=dummy --batch=8 --iterations=2 2>&1)
  pick() { echo "$log" | grep "Average $1" | sed 's/.*: \([0-9.]*\) ms./\1/' | xargs printf '%.1f'; }
  echo "| $name | $(pick 'Forward pass') | $(pick 'Backward pass') | $(pick 'Forward-Backward') |"
done
