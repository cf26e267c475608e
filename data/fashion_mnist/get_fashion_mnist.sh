#!/usr/bin/env bash
# Fashion-MNIST as LMDBs of Datum for the Data layer:
#   data/fashion_mnist/fashion_mnist_train_lmdb  (60000 images 1x28x28, labels 0-9)
#   data/fashion_mnist/fashion_mnist_test_lmdb   (10000)
# The IDX files come from Debian's dataset-fashion-mnist package, installed if
# missing (needs root or sudo). Idempotent: an LMDB already made is kept, and
# each is written under a temporary name and renamed when complete. BUILD_DIR
# (default build) names the build whose convert_mnist runs, e.g. build_cpu.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
src=/usr/share/datasets/fashion-mnist
build_dir="${BUILD_DIR:-build}"
case "$build_dir" in
  /*) convert="$build_dir/tools/convert_mnist" ;;
  *) convert="$root/$build_dir/tools/convert_mnist" ;;
esac

if [ ! -f "$src/train-images-idx3-ubyte.gz" ] || [ ! -f "$src/t10k-images-idx3-ubyte.gz" ]; then
  echo "get_fashion_mnist: installing dataset-fashion-mnist"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends dataset-fashion-mnist
fi

if [ ! -x "$convert" ]; then
  echo "get_fashion_mnist: building $convert"
  make -C "$root" -j2 "$build_dir/tools/convert_mnist" BUILD_DIR="$build_dir"
fi

convert_set() {  # convert_set <idx prefix> <lmdb name>
  local prefix="$1" db="$here/$2"
  if [ -f "$db/data.mdb" ]; then
    echo "get_fashion_mnist: $db exists, kept"
    return
  fi
  local tmp="$db.tmp.$$"
  rm -rf "$tmp"
  "$convert" "$src/$prefix-images-idx3-ubyte.gz" "$src/$prefix-labels-idx1-ubyte.gz" "$tmp"
  rm -rf "$db"
  mv "$tmp" "$db"
  echo "get_fashion_mnist: wrote $db"
}

convert_set train fashion_mnist_train_lmdb
convert_set t10k fashion_mnist_test_lmdb
