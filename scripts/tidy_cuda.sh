#!/usr/bin/env bash
# Runs clang-tidy over every CUDA source (.cu), parsed by clang as CUDA for
# the host side of sm_80. nvcc builds the code; this only lints it.
#   scripts/tidy_cuda.sh [BUILD_DIR] [file.cu ...]
# BUILD_DIR (default build) must hold the generated protobuf headers
# (`make lib` makes them). CLANG_TIDY picks the binary; it needs clang 19 or
# newer for CUDA 12+ headers (Debian: apt-get install clang-tidy-19).
# Exits non-zero if any file fails to parse or has a finding.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${1:-build}
shift || true
cuda_dir=${CUDA_DIR:-/usr/local/cuda}
tidy=${CLANG_TIDY:-$(command -v clang-tidy-22 || command -v clang-tidy-19 || echo clang-tidy)}
checks='-*,bugprone-*,clang-analyzer-*,performance-*,-bugprone-easily-swappable-parameters,-performance-enum-size'

[ -f "$build_dir/src/demi/proto/demi.pb.h" ] ||
  { echo "tidy_cuda: no generated headers in $build_dir/src; run make lib first" >&2; exit 2; }
[ -d "$cuda_dir/include" ] || { echo "tidy_cuda: no CUDA toolkit at $cuda_dir" >&2; exit 2; }

files=("$@")
[ ${#files[@]} -gt 0 ] || mapfile -t files < <(find src -name '*.cu' | sort)

flags=(-x cuda --cuda-path="$cuda_dir" --cuda-gpu-arch=sm_80 -nocudalib
       -isystem scripts/cuda_tidy_shim -Iinclude -I"$build_dir/src"
       -I/usr/include/x86_64-linux-gnu/openblas-pthread -DUSE_CUDNN -DUSE_NCCL -std=c++17)

failed=0
for f in "${files[@]}"; do
  out=$("$tidy" --quiet --checks="$checks" --warnings-as-errors='*' \
        --header-filter='^(include|src)/' "$f" -- "${flags[@]}" 2>&1) && status=0 || status=$?
  if [ $status -ne 0 ]; then
    failed=$((failed + 1))
    echo "== $f"
    echo "$out" | grep -v "warnings generated" || true
  fi
done
echo "tidy_cuda: ${#files[@]} files, $failed with findings or parse errors ($("$tidy" --version | grep -o 'version [0-9.]*'))"
[ $failed -eq 0 ]
