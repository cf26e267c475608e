#!/usr/bin/env bash
# Trains LeNet on DummyData with every update rule and prints how the loss
# moved: the first and last "Iteration N, loss = X" of each run.
#   bash examples/lenet_dummy_solvers.sh [max_iter, default 300]
set -euo pipefail
cd "$(dirname "$0")/.."

max_iter="${1:-300}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for type in SGD Nesterov AdaGrad RMSProp AdaDelta Adam; do
  case "$type" in
    SGD | Nesterov) hyper="base_lr: 0.01 momentum: 0.9" ;;
    AdaGrad) hyper="base_lr: 0.01" ;;
    RMSProp) hyper="base_lr: 0.001 rms_decay: 0.98" ;;
    AdaDelta) hyper="base_lr: 1 momentum: 0.95 delta: 1e-6" ;;
    Adam) hyper="base_lr: 0.001 momentum: 0.9 momentum2: 0.999" ;;
  esac
  # The shared settings of the LeNet solver, with this rule's own.
  grep -vE '^(type|base_lr|momentum|max_iter|snapshot|snapshot_prefix):' \
    models/lenet/lenet_dummy_solver.prototxt > "$work/$type.prototxt"
  cat >> "$work/$type.prototxt" <<SOLVER
type: "$type"
$hyper
max_iter: $max_iter
snapshot_prefix: "$work/$type"
SOLVER
  ./build/tools/train --solver="$work/$type.prototxt" > "$work/$type.log" 2>&1
  losses=$(grep -oE 'Iteration [0-9]+, loss = [-+.0-9eE]+' "$work/$type.log")
  printf '%-9s %s  ->  %s\n' "$type" "$(head -1 <<< "$losses")" "$(tail -1 <<< "$losses")"
done
