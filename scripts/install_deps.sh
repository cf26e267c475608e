#!/usr/bin/env bash
# Installs every build and run dependency of Demitasse from Debian's packages.
# Idempotent: packages already present are left alone, and apt is not touched at all
# when nothing is missing. Needs root (or sudo) when something has to be installed.
#   scripts/install_deps.sh          build, test and example dependencies
#   scripts/install_deps.sh --bench  also the benchmark peer (PyTorch)
#   scripts/install_deps.sh --fuzz   also Clang, libFuzzer and its OpenMP (make fuzz)
set -euo pipefail

packages=(
  build-essential pkg-config
  protobuf-compiler libprotobuf-dev
  libgoogle-glog-dev libgflags-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  liblmdb-dev
  libopencv-dev
  # libjpeg-turbo's API: data/image_file checks a JPEG's entropy-coded data
  # for damage, whose warnings OpenCV's decoder swallows; data/jpeg_region
  # decodes only a crop, DCT-scaled (jpeg_crop_scanline, jpeg_skip_scanlines:
  # libjpeg-turbo's, which libjpeg-dev brings as libjpeg62-turbo-dev).
  libjpeg-dev libjpeg62-turbo-dev
  libopenblas-dev
  # HDF5Data / HDF5Output layers: HDF5's C API (serial build).
  libhdf5-dev
  # CPU engine: oneDNN (JIT, runtime ISA dispatch; OpenMP threading).
  libdnnl-dev
  # Replication across processes and hosts: Gloo (TCP), its Redis store, and a
  # Redis server that tests and examples start on loopback.
  libgloo-dev libhiredis-dev redis-server
  # Launching ranks as cluster users do: mpirun (Open MPI) sets the rank
  # variables train reads; tests start 2 ranks with it on loopback.
  openmpi-bin
  clang-format
  # Python bindings (make python): pybind11's headers, Python's headers,
  # NumPy for the zero-copy blob views, pytest for tests/python.
  pybind11-dev python3-dev python3-numpy python3-pytest
  # pycaffe compatibility: caffe_pb2 (protoc --python_out) needs protobuf's
  # Python runtime; Net.save_hdf5 / load_hdf5 write HDF5 with h5py.
  python3-protobuf python3-h5py
  # GNU time: bench/memory.sh reads a process's peak RSS with it.
  time
  # make bundle: patchelf gives the libraries it copies from Debian a RUNPATH of $ORIGIN, so
  # each finds its own dependencies inside the bundle (they have none; RUNPATH is not inherited).
  patchelf
  # procps (ps, pkill, /bin/kill): to watch and stop trainers; the tests need
  # only the shell's own kill.
  procps
  # Real data for tests and examples: JPEG/PNG images and Fashion-MNIST.
  opencv-doc
  dataset-fashion-mnist
  # Tools around training: JSON reports (header-only nlohmann-json), draw_net's
  # rendering (Graphviz dot), tools/extra/plot_training_log.py (matplotlib) and
  # the Python tests of tools/extra (pytest).
  nlohmann-json3-dev graphviz python3-matplotlib python3-pytest
)
for option in "$@"; do
  case "$option" in
    # The peers of bench/: PyTorch, and torchvision (with PIL) for bench/data_vs_torch.sh.
    --bench) packages+=(python3-torch python3-torchvision) ;;
    # make fuzz: clang++, libclang_rt.fuzzer and the sanitizer runtimes, and
    # libomp for Clang's -fopenmp.
    --fuzz) packages+=(clang libclang-rt-dev libomp-dev) ;;
    *) echo "install_deps: unknown option '$option' (use --bench, --fuzz)" >&2; exit 1 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install_deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
