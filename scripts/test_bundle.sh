#!/usr/bin/env bash
# Tests a tarball of `make bundle` as a machine without our build would run it: unpacked in
# an empty temporary directory and run from another one, with an environment that cannot see
# the build tree (env -i, PATH=/usr/bin:/bin, no LD_LIBRARY_PATH). Checks
#   - its size (at most BUNDLE_LIMIT_MIB, 60);
#   - that every binary and library it holds loads each library from the bundle, or from the
#     host where the host provides it (glibc's and NVIDIA's: scripts/bundle_libs.sh);
#   - tools/time on the zoo's LeNet (two iterations), a few quick suites of test_all, the
#     Python package imported by Debian's python3 and running a net, bench/gpu.sh --dry.
#   scripts/test_bundle.sh BUILD_DIR/demitasse-bundle-<cpu|cuda>.tar.xz
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
source "$repo/scripts/bundle_libs.sh"

if [ $# -ne 1 ] || [ ! -f "$1" ]; then
  echo "usage: scripts/test_bundle.sh BUNDLE.tar.xz (make bundle writes it into BUILD_DIR)" >&2
  exit 2
fi
tarball=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
limit_mib=${BUNDLE_LIMIT_MIB:-60}
start=$SECONDS
fail() {
  echo "test_bundle: FAILED: $*" >&2
  exit 1
}

bytes=$(stat -c %s "$tarball")
[ "$bytes" -le $((limit_mib * 1048576)) ] ||
  fail "$tarball is $((bytes / 1048576)) MiB, over $limit_mib MiB"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/unpacked" "$tmp/elsewhere"
tar -C "$tmp/unpacked" -xJf "$tarball"
dir=$(echo "$tmp"/unpacked/demitasse-bundle-*)
[ -d "$dir" ] || fail "$tarball does not unpack to one demitasse-bundle-* directory"
# Run from a directory that is neither the bundle nor the source tree, seeing neither.
cd "$tmp/elsewhere"
clean_env=(env -i PATH=/usr/bin:/bin HOME="$tmp/elsewhere" LANG=C.UTF-8)

# ---- every library from the bundle or the host's glibc and NVIDIA ----
mapfile -t elfs < <(bundle_elf_files "$dir")
for elf in "${elfs[@]}"; do
  while read -r soname path; do
    [ "$path" != not ] || fail "${elf#"$dir"/} needs $soname, which is neither bundled nor found"
    case $path in
      "$dir"/*) ;;
      *) host_provided "$soname" ||
           fail "${elf#"$dir"/} loads $soname from the host ($path): it should be bundled" ;;
    esac
  done < <(loaded_libraries "$elf")
done
checked=${#elfs[@]}
[ "$checked" -ge 10 ] || fail "only $checked binaries and libraries found in $dir"
echo "test_bundle: $checked binaries and libraries load only bundled, glibc and NVIDIA libraries"

# ---- tools/time on a zoo net ----
log=$tmp/time.log
"${clean_env[@]}" "$dir/tools/time" --model="$dir/models/lenet/lenet_dummy.prototxt" \
  --iterations=2 >"$log" 2>&1 || { tail -20 "$log"; fail "tools/time on LeNet"; }
grep -q 'Average Forward-Backward: [0-9.]* ms' "$log" || { tail -20 "$log"; fail "tools/time printed no time"; }
echo "test_bundle: tools/time ran LeNet: $(grep -o 'Average Forward-Backward: [0-9.]* ms' "$log")"

# ---- a few quick suites of the test binary ----
filter='BlobTest.*:ReLULayerTest*:PlannerTest*:LazyLibraryTest.*'
"${clean_env[@]}" "$dir/test/test_all" --gtest_filter="$filter" >"$log" 2>&1 ||
  { tail -30 "$log"; fail "test_all --gtest_filter='$filter'"; }
passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' "$log" | tail -1)
[ "${passed:-0}" -ge 10 ] || { tail -30 "$log"; fail "test_all ran ${passed:-0} tests of '$filter'"; }
echo "test_bundle: test_all: $passed tests passed ($filter)"

# ---- the Python package, from the bundle, with Debian's interpreter ----
"${clean_env[@]}" PYTHONPATH="$dir/python" /usr/bin/python3 - "$dir" >"$log" 2>&1 <<'PY' ||
import os, sys
import caffe
bundle = sys.argv[1]
assert caffe.__file__.startswith(bundle), caffe.__file__
net = caffe.Net(os.path.join(bundle, "models/lenet/lenet_dummy.prototxt"), caffe.TRAIN)
loss = float(net.forward()["loss"])
assert loss > 0, loss
print("caffe from %s ran LeNet forward: loss %.3f" % (os.path.dirname(caffe.__file__), loss))
PY
  { cat "$log"; fail "the Python package"; }
echo "test_bundle: python3: $(tail -1 "$log")"

# ---- the GPU benchmark's dry run ----
"${clean_env[@]}" OUT="$tmp/out" "$dir/bench/gpu.sh" --dry >"$log" 2>&1 ||
  { tail -20 "$log"; fail "bench/gpu.sh --dry"; }
report=$(ls "$tmp"/out/bench/results/gpu_*_dry.md 2>/dev/null | head -1)
[ -n "$report" ] || { tail -20 "$log"; fail "bench/gpu.sh --dry wrote no report"; }
grep -qE '^\| resnet50 \| [0-9]+ \| FP32 \| [0-9.]+ \| [0-9.]+ \| (host|device) \|$' "$report" ||
  { cat "$report"; fail "bench/gpu.sh --dry: no ResNet-50 FP32 row with a rate"; }
echo "test_bundle: bench/gpu.sh --dry wrote $(basename "$report") ($(grep -c '^| ' "$report") table rows)"

echo "test_bundle: ok: $(basename "$tarball"), $(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }') MiB, in $((SECONDS - start)) s"
