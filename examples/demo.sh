#!/usr/bin/env bash
# `make demo`: prepares Fashion-MNIST, trains LeNet for 2000 iterations on the
# CPU and prints the test accuracy, times LeNet's forward and backward, and
# plots the log's loss and accuracy (build/lenet_fashion_train.log.png).
set -euo pipefail
cd "$(dirname "$0")/.."

bash examples/fashion_mnist/train_lenet.sh 2000
./build/tools/time --model=models/lenet_fashion/train_val.prototxt --stage=dummy --iterations=10 2>&1 |
  grep -E "Average (Forward|Backward)"
# The training curves, next to the log.
echo "Loss and accuracy plotted in $(tools/extra/plot_training_log.py build/lenet_fashion_train.log)"
