#!/usr/bin/env bash
# `make demo`: times LeNet's forward and backward passes on DummyData.
set -euo pipefail
cd "$(dirname "$0")/.."

./build/tools/time --model=models/lenet/lenet_dummy.prototxt --iterations=10
