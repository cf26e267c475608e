#!/usr/bin/env bash
# The Data layer's JPEG pipeline against PyTorch's DataLoader + torchvision on the same files
# (issue 25, item 5): RandomResizedCrop 224 + mirror + mean/scale, batch 64, one process per row
# pinned with taskset to 1 and to 2 cores; our rows with the full OpenCV decode
# (fast_jpeg_decode: false) and with the region decode (the default).
#   bash bench/data_vs_torch.sh      (BUILD_DIR=build_cpu to use another build; ~5 minutes)
# Needs build/tools/convert_imageset and build/bench/data_throughput (make all bench), opencv-doc,
# and Debian's python3-torch and python3-torchvision (scripts/install_deps.sh --bench).
# Then trains ResNet-50 on the CPU from the same LMDB and reports how long each step waited for
# data. Writes bench/results/data_vs_torch.md. The rows run alternately, in two rounds, because the
# machine is shared: compare rows of the same round.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build}
COUNT=${COUNT:-1200}
ROW_SECONDS=${ROW_SECONDS:-8}
RESNET_BATCH=${RESNET_BATCH:-16}
RESNET_STEPS=${RESNET_STEPS:-6}
OUT=${OUT:-bench/results/data_vs_torch.md}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

/usr/bin/python3 bench/imagenet_like.py "$WORK/images" --count "$COUNT"
"$BUILD/tools/convert_imageset" --encoded --shuffle "$WORK/images/" "$WORK/images/list.txt" \
  "$WORK/lmdb" > "$WORK/convert.log" 2>&1 || { cat "$WORK/convert.log"; exit 1; }

transform() {  # $1: fast_jpeg_decode
  echo "transform_param { random_resized_crop: true crop_size: 224 mirror: true" \
    "mean_value: 104 mean_value: 117 mean_value: 124 scale: 0.017 fast_jpeg_decode: $1 }"
}
rate() { sed -n 's/^RESULT images_per_s=//p'; }
# Our rows time the data pipeline alone: the consumer computes nothing, so OpenMP's idle threads
# (Forward's normalisation runs on a team) wait passively instead of spinning against the decode
# threads, as on a GPU host, where that pass runs on the device.
ours() {  # $1 cores, $2 fast
  OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} taskset -c "$(seq -s, 0 $(($1 - 1)))" "$BUILD/bench/data_throughput" --source="$WORK/lmdb" \
    --transform="$(transform "$2")" --decode_threads="$1" --batch_size=64 --seconds="$ROW_SECONDS" | rate
}
torch_row() {  # $1 cores
  taskset -c "$(seq -s, 0 $(($1 - 1)))" /usr/bin/python3 bench/torch_data.py "$WORK/images" \
    --workers "$1" --seconds "$ROW_SECONDS" | rate
}

{
  echo "# Data layer vs PyTorch DataLoader + torchvision (bench/data_vs_torch.sh)"
  echo
  echo "$(date -u +%Y-%m-%d), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)),"
  echo "shared with other work (load average $(cut -d' ' -f1-3 /proc/loadavg) at the start)."
  echo "$COUNT ImageNet-like JPEGs (bench/imagenet_like.py: opencv-doc's"
  echo "photos, shorter side 333-500, quality 90, $(du -sh "$WORK/images" | cut -f1) in all), as a"
  echo "folder (torchvision) and an encoded LMDB (ours). RandomResizedCrop 224 + mirror + mean/scale,"
  echo "batch 64, $ROW_SECONDS s a row after warm-up, each row one process pinned with taskset;"
  echo "our rows with OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} (the script's header says why)."
  echo
  echo "| round | cores | ours, full decode | ours, region decode | torchvision | new / old | new / torch |"
  echo "|---|---|---|---|---|---|---|"
} > "$WORK/table.md"
for round in 1 2; do
  for cores in 1 2; do
    old=$(ours "$cores" false)
    new=$(ours "$cores" true)
    peer=$(torch_row "$cores")
    line=$(awk -v r="$round" -v c="$cores" -v o="$old" -v n="$new" -v p="$peer" 'BEGIN {
      printf "| %d | %d | %.0f img/s | %.0f img/s | %.0f img/s | %.2fx | %.2fx |", r, c, o, n, p, n / o, n / p }')
    echo "$line" | tee -a "$WORK/table.md"
  done
done
# Issue 25's last check: a CPU ResNet-50 step with the real Data layer on these files never
# waits for data (one decode thread; training takes every core).
{
  echo
  echo "ResNet-50 training on the CPU, batch $RESNET_BATCH, its Data layer reading the LMDB above with"
  echo "the same transform, 1 decode thread, every core training (\`data_throughput --train_net\`):"
  echo
  "$BUILD/bench/data_throughput" --train_net=models/resnet50/train_val.prototxt \
    --source="$WORK/lmdb" --transform="$(transform true)" --decode_threads=1 \
    --batch_size="$RESNET_BATCH" --steps="$RESNET_STEPS" | sed -n 's/^  */    /p'
} | tee -a "$WORK/table.md"
mkdir -p "$(dirname "$OUT")"
cp "$WORK/table.md" "$OUT"
echo "wrote $OUT"
