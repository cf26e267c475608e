#!/usr/bin/env bash
# Packs BUILD_DIR/demitasse-bundle-<cpu|cuda>.tar.xz, which `make bundle` calls after relinking
# the tools, test_all and the Python module against libdemi.so into BUILD_DIR/bundle_bin.
#   scripts/make_bundle.sh BUILD_DIR cpu|cuda PY_MODULE
# The tarball unpacks to one directory, demitasse-bundle-<flavor>/, that runs from anywhere on
# an x86-64 Linux with nothing installed but glibc (as new as the build machine's) and, for
# the GPU, NVIDIA's driver, CUDA runtime, cuBLAS, cuDNN and NCCL:
#   tools/        the tools (time, train, memory...), RUNPATH $ORIGIN/../lib
#   test/test_all the C++ suite
#   lib/          libdemi.so and every library the binaries load, but glibc's and NVIDIA's,
#                 each with RUNPATH $ORIGIN: a RUNPATH serves only its own object's needs, so
#                 each library must find its own dependencies beside it
#   python/       the demitasse and caffe packages (for the build's Python version)
#   bench/        gpu.sh, run_gtests.sh (its crash-tolerant test runner), torch_runner.py (its
#                 PyTorch peer) and data_throughput (its data step), and the models/ they run
# It fails when a binary still needs a library it cannot find, or when the tarball is over
# BUNDLE_LIMIT_MIB (60). patchelf sets the copied libraries' RUNPATH (Debian's are built
# without one); our binaries get theirs at link time.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bundle_libs.sh

if [ $# -ne 3 ]; then
  echo "usage: scripts/make_bundle.sh BUILD_DIR cpu|cuda PY_MODULE (make bundle calls it)" >&2
  exit 2
fi
build=$1 flavor=$2 py_module=$3
name=demitasse-bundle-$flavor
stage=$build/bundle/$name
out=$build/$name.tar.xz
limit_mib=${BUNDLE_LIMIT_MIB:-60}
command -v patchelf >/dev/null || {
  echo "make_bundle: patchelf is missing (Debian's package patchelf; scripts/install_deps.sh)" >&2
  exit 1
}

rm -rf "$build/bundle"
mkdir -p "$stage"/{tools,test,lib,python,bench/results,models}

# ---- ours: relinked binaries, the package, the benchmark and its models ----
cp "$build"/bundle_bin/tools/* "$stage/tools/"
cp "$build/bundle_bin/test/test_all" "$stage/test/"
cp "$build/lib/libdemi.so" "$stage/lib/"
cp -r python/demitasse python/caffe "$stage/python/"
find "$stage/python" \( -name __pycache__ -o -name '_demitasse*.so*' \) -prune -exec rm -rf {} +
cp "$py_module" "$stage/python/demitasse/"
cp bench/gpu.sh bench/run_gtests.sh bench/torch_runner.py "$build/bundle_bin/bench/data_throughput" "$stage/bench/"
for model in lenet resnet50 googlenet alexnet; do
  mkdir -p "$stage/models/$model"
  cp models/$model/*.prototxt "$stage/models/$model/"
done
# Debug information is most of each binary's bytes (-g1: 19 MB of a 22 MB tool).
strip --strip-unneeded "$stage"/tools/* "$stage/test/test_all" "$stage/bench/data_throughput" \
  "$stage/lib/libdemi.so" \
  "$stage"/python/demitasse/_demitasse*.so

# ---- the libraries they load (all but the host's: scripts/bundle_libs.sh) ----
missing=0
mapfile -t elfs < <(bundle_elf_files "$stage")
for elf in "${elfs[@]}"; do
  while read -r soname path; do
    host_provided "$soname" && continue
    if [ "$path" = not ]; then
      echo "make_bundle: $elf needs $soname, which this machine cannot find" >&2
      missing=1
    elif [ ! -e "$stage/lib/$soname" ]; then
      cp -L "$path" "$stage/lib/$soname"
    fi
  done < <(loaded_libraries "$elf")
done
[ "$missing" -eq 0 ] || exit 1
# libdemi.so keeps its absolute entries (the CUDA toolkit's lib64, where the lazy loader
# looks first for cuBLAS, cuDNN and NCCL); the build tree's are dropped.
demi_runpath=$(patchelf --print-rpath "$stage/lib/libdemi.so" | tr ':' '\n' |
  grep '^/' | grep -v "^$PWD" | paste -sd: || true)
for lib in "$stage"/lib/*; do
  if [ "$(basename "$lib")" = libdemi.so ]; then
    patchelf --set-rpath "\$ORIGIN${demi_runpath:+:$demi_runpath}" "$lib"
  else
    chmod u+w "$lib"
    patchelf --set-rpath '$ORIGIN' "$lib"
  fi
done

cat >"$stage/README.md" <<EOF
# $name

Demitasse $(git describe --always --dirty 2>/dev/null || echo unknown), built $(date -u +%F)
on $(. /etc/os-release && echo "$PRETTY_NAME"), glibc $(ldd --version | head -1 | awk '{print $NF}').
Runs from any directory; needs glibc at least that new and, for the GPU, NVIDIA's driver,
CUDA runtime, cuBLAS, cuDNN and NCCL (looked for in LD_LIBRARY_PATH, the loader's cache and
/usr/local/cuda/lib64).

    bench/gpu.sh              # the GPU benchmark: writes bench/results/gpu_<gpu>.md
    bench/gpu.sh --dry        # every step on tiny iterations (no GPU needed)
    tools/time --model=models/resnet50/train_val.prototxt --stage=dummy --gpu=0
    test/test_all --gtest_filter='*Gpu*'
    PYTHONPATH=python python3 -c 'import caffe'   # the build's Python version, NumPy, protobuf
EOF

# ---- the tarball: sorted names (similar files adjacent), xz -9 (a 64 MiB window) ----
tar -C "$build/bundle" --sort=name --owner=0 --group=0 --numeric-owner -cf - "$name" |
  xz -9 -T1 >"$out.tmp"
mv -f "$out.tmp" "$out"
bytes=$(stat -c %s "$out")
echo "make_bundle: $out: $(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }') MiB" \
  "($(du -sm "$stage" | cut -f1) MiB unpacked, $(ls "$stage/lib" | wc -l) libraries)"
if [ "$bytes" -gt $((limit_mib * 1048576)) ]; then
  echo "make_bundle: $out is over $limit_mib MiB: see what lib/ holds (du -a $stage/lib)" >&2
  exit 1
fi
