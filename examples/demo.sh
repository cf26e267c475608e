#!/usr/bin/env bash
# `make demo`: prepares Fashion-MNIST, trains LeNet for 2000 iterations on the
# CPU and prints the test accuracy, then times LeNet's forward and backward.
set -euo pipefail
cd "$(dirname "$0")/.."

bash examples/fashion_mnist/train_lenet.sh 2000
./build/tools/time --model=models/lenet_fashion/train_val.prototxt --stage=dummy --iterations=10 2>&1 |
  grep -E "Average (Forward|Backward)"
