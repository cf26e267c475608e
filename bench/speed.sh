#!/usr/bin/env bash
# Training-step speed: Demitasse's DNNL engine vs its CAFFE engine (OpenBLAS) vs PyTorch on the
# same prototxts, at 1 and 2 threads, and LeNet on Fashion-MNIST; writes bench/results/speed.md.
#   bash bench/speed.sh [--quick] [--build=DIR] [MAKEVAR=value ...]
# e.g. bash bench/speed.sh --build=build_cpu CPU_ONLY=1 (make variables go to the build step).
# The full run takes about 20 minutes on 2 cores; run it on a quiet machine (the numbers are
# ratios measured side by side, but a busy core still skews them). --quick checks the script.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
options=()
make_vars=()
for arg in "$@"; do
  case "$arg" in
    --build=*) build=${arg#--build=}; options+=("$arg") ;;
    --*) options+=("$arg") ;;
    *=*) make_vars+=("$arg") ;;
    *) echo "speed.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done
bash scripts/install_deps.sh --bench
make -j2 tools "$build/bench/sgemm_peak" BUILD_DIR="$build" "${make_vars[@]}" >/dev/null
/usr/bin/python3 bench/speed.py "${options[@]}"
