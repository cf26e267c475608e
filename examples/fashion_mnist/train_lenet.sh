#!/usr/bin/env bash
# Trains LeNet on Fashion-MNIST and prints its test accuracy.
#   examples/fashion_mnist/train_lenet.sh [MAX_ITER]
# MAX_ITER (default: the solver's 10000) shortens the run; `make demo` uses 2000.
# Prepares the data first (data/fashion_mnist/get_fashion_mnist.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."

bash data/fashion_mnist/get_fashion_mnist.sh
solver=models/lenet_fashion/solver.prototxt
if [ $# -ge 1 ]; then
  tmp=$(mktemp --suffix=.prototxt)
  trap 'rm -f "$tmp"' EXIT
  sed "s/^max_iter: .*/max_iter: $1/" "$solver" > "$tmp"
  solver=$tmp
fi
start=$(date +%s)
./build/tools/train --solver="$solver" 2>&1 | tee build/lenet_fashion_train.log |
  grep -E "Iteration [0-9]+, (loss|Testing)|Test net output|Optimization Done"
echo "Trained in $(( $(date +%s) - start )) s; final test accuracy:" \
  "$(grep 'Test net output #0' build/lenet_fashion_train.log | tail -1 | sed 's/.*= //')"
