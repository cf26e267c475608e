#!/usr/bin/env bash
# Data-parallel scaling of CPU training on this machine: LeNet (batch 64 per
# replica, 28x28) and ResNet-18 (batch 8 per replica, 3x112x112, written here
# since models/ has none), each trained with build/tools/train as
#   1 replica (on every core, then on 1 thread: OpenMP and OpenBLAS),
#   2 CPU replicas in one process (--cpu_replicas=2),
#   2 processes of 1 replica each (--world_size=2, file rendezvous on loopback),
#   and, for LeNet only, 2 CPU replicas with no thread settings, so that
#   train's own cap (cores / replicas threads each) applies.
# The per-replica batch is fixed, so the global batch grows with the replicas.
# Throughput comes from rank 0's "Speed:" lines, skipping the first display
# interval (warm-up). Prints a markdown table and writes bench/results/scaling.md.
#   bash bench/scaling.sh
set -euo pipefail
cd "$(dirname "$0")/.."

lenet_iters="${LENET_ITERS:-200}"    # display every 20: 8 timed intervals after warm-up
resnet_iters="${RESNET_ITERS:-32}"   # display every 4: 6 timed intervals after warm-up
resnet_size="${RESNET_SIZE:-112}"
# nproc obeys OMP_NUM_THREADS; the cores are what the machine has.
cores="$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)"
train=./build/tools/train
[ -x "$train" ] || { echo "$train is missing: run make first" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# ResNet-18 (He et al. 2016, table 1): BasicBlocks of two 3x3 convolutions,
# 2 per stage at 64-128-256-512 channels, BatchNorm + Scale after every
# convolution, 1x1 projections where the shape changes. DummyData input.
python3 - "$work/resnet18.prototxt" "$resnet_size" << 'PY'
import sys

path, size = sys.argv[1], int(sys.argv[2])
lines = ['name: "ResNet-18"']


def layer(name, kind, bottoms, top, body=""):
    inputs = " ".join('bottom: "%s"' % b for b in bottoms)
    lines.append('layer { name: "%s" type: "%s" %s top: "%s" %s}' % (name, kind, inputs, top, body))


def conv_bn(name, bottom, channels, kernel, stride, relu):
    layer(name, "Convolution", [bottom], name,
          "param { lr_mult: 1 decay_mult: 1 } convolution_param { num_output: %d "
          "bias_term: false kernel_size: %d stride: %d pad: %d weight_filler { type: "
          '"msra" } } ' % (channels, kernel, stride, kernel // 2))
    layer(name + "_bn", "BatchNorm", [name], name, "param { lr_mult: 0 } " * 3)
    layer(name + "_scale", "Scale", [name], name, "scale_param { bias_term: true } ")
    if relu:
        layer(name + "_relu", "ReLU", [name], name)
    return name


lines.append('layer { name: "data" type: "DummyData" top: "data" top: "label" dummy_data_param {'
             " shape { dim: 8 dim: 3 dim: %d dim: %d } shape { dim: 8 }" % (size, size))
lines.append('  data_filler { type: "gaussian" std: 1 }'
             ' data_filler { type: "uniform" min: 0 max: 999.99 } } }')
conv_bn("conv1", "data", 64, 7, 2, True)
layer("pool1", "Pooling", ["conv1"], "pool1",
      "pooling_param { pool: MAX kernel_size: 3 stride: 2 } ")
top, channels = "pool1", 64
for stage, width in enumerate([64, 128, 256, 512], start=2):
    for block in "ab":
        stride = 2 if block == "a" and stage > 2 else 1
        name = "res%d%s" % (stage, block)
        branch = conv_bn(name + "_branch2a", top, width, 3, stride, True)
        branch = conv_bn(name + "_branch2b", branch, width, 3, 1, False)
        shortcut = top
        if stride != 1 or channels != width:
            shortcut = conv_bn(name + "_branch1", top, width, 1, stride, False)
        layer(name, "Eltwise", [shortcut, branch], name, "eltwise_param { operation: SUM } ")
        layer(name + "_relu", "ReLU", [name], name)
        top, channels = name, width
layer("pool5", "Pooling", [top], "pool5", "pooling_param { pool: AVE global_pooling: true } ")
layer("fc1000", "InnerProduct", ["pool5"], "fc1000",
      "param { lr_mult: 1 decay_mult: 1 } param { lr_mult: 2 decay_mult: 0 } "
      'inner_product_param { num_output: 1000 weight_filler { type: "msra" } } ')
layer("loss", "SoftmaxWithLoss", ["fc1000", "label"], "loss")
with open(path, "w") as f:
    f.write("\n".join(lines) + "\n")
PY

# write_solver NAME NET MAX_ITER DISPLAY: SGD, no testing, no snapshots.
write_solver() {
  cat > "$work/$1_solver.prototxt" << SOLVER
net: "$2"
type: "SGD"
base_lr: 0.01
momentum: 0.9
weight_decay: 0.0005
lr_policy: "fixed"
max_iter: $3
display: $4
snapshot: 0
snapshot_after_train: false
snapshot_prefix: "$work/$1"
random_seed: 1701
SOLVER
}
write_solver lenet models/lenet/lenet_dummy.prototxt "$lenet_iters" 20
write_solver resnet18 "$work/resnet18.prototxt" "$resnet_iters" 4

# mean_ms LOG...: mean ms/iter over each log's Speed lines after its first
# (equal display intervals), averaged over the logs.
mean_ms() {
  local log
  for log in "$@"; do
    grep -oE 'Speed: [0-9.]+ iter/s \([0-9.]+ ms/iter\)' "$log" | tail -n +2 |
      sed -E 's/.*\(([0-9.]+) ms.*/\1/' | awk '{s += $1} END {if (NR) print s / NR}'
  done | awk '{s += $1} END {if (NR) printf "%.1f", s / NR}'
}

# run NAME LABEL REPLICAS BLAS_THREADS MODE: trains and appends a table row.
# MODE: single | threads (--cpu_replicas) | processes (--world_size) |
# independent (REPLICAS unrelated single-replica runs at once: what the cores
# give two replicas without any communication).
declare -A baseline_all baseline_one
rows=()
run() {
  local name=$1 label=$2 replicas=$3 threads=$4 mode=$5 batch log
  case "$name" in lenet) batch=64 ;; resnet18) batch=8 ;; esac
  log="$work/$name.$mode.$threads.log"
  local solver="$work/${name}_solver.prototxt"
  # Each replica gets THREADS cores: OpenMP (oneDNN, the layers' loops) and
  # OpenBLAS alike. "unset" leaves both to train's defaults.
  local per_process=() per_rank=()
  unset OPENBLAS_NUM_THREADS
  if [ "$threads" != unset ]; then
    export OPENBLAS_NUM_THREADS="$threads"
    per_rank=(--threads="$threads")
    per_process=(--threads="$((threads * replicas))")
  fi
  case "$mode" in
    single) "$train" --logtostderr --solver="$solver" "${per_rank[@]}" > "$log" 2>&1 ;;
    threads)
      "$train" --logtostderr --solver="$solver" --cpu_replicas="$replicas" "${per_process[@]}" \
        > "$log" 2>&1 ;;
    processes | independent)
      local pids=() rank status=0 run_id out distributed=()
      run_id="scaling_$(date +%s%N)"  # one for all ranks of this run
      for rank in $(seq 0 $((replicas - 1))); do
        out="$log"
        [ "$rank" = 0 ] || out="$log.rank$rank"
        [ "$mode" = independent ] || distributed=(--world_size="$replicas" --rank="$rank"
          --rendezvous="file://$work/store.$name" --rendezvous_host=127.0.0.1
          --run_id="$run_id" --comm_timeout=120)
        "$train" --logtostderr --solver="$solver" "${per_rank[@]}" "${distributed[@]}" > "$out" 2>&1 &
        pids+=("$!")
      done
      for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
      [ "$status" = 0 ] || { echo "$name $label failed:" >&2; tail -n 5 "$log"* >&2; exit 1; } ;;
  esac
  unset OPENBLAS_NUM_THREADS
  local ms
  if [ "$mode" = independent ]; then ms=$(mean_ms "$log"*); else ms=$(mean_ms "$log"); fi
  [ -n "$ms" ] || { echo "no Speed lines in $log" >&2; exit 1; }
  local images wait
  images=$(awk -v b="$batch" -v r="$replicas" -v ms="$ms" \
    'BEGIN {printf "%.1f", b * r * 1000 / ms}')
  wait=$(grep -oE 'of which [0-9.]+ ms \([0-9.]+%\)' "$log" |
    sed -E 's/of which ([0-9.]+) ms \(([0-9.]+%)\)/\1 ms (\2)/' || true)
  local collectives
  collectives=$(grep -oE '[0-9.]+ gradient all-reduces per step' "$log" |
    sed -E 's/ gradient.*//' | tail -n 1 || true)
  if [ "$mode" = single ]; then
    if [ "$threads" = 1 ]; then baseline_one[$name]=$images; else baseline_all[$name]=$images; fi
  fi
  local speedup efficiency
  speedup=$(awk -v a="$images" -v b="${baseline_all[$name]}" 'BEGIN {printf "%.2fx", a / b}')
  efficiency=$(awk -v a="$images" -v b="${baseline_one[$name]:-0}" -v r="$replicas" \
    'BEGIN {if (b > 0) printf "%.0f%%", 100 * a / (r * b); else printf "-"}')
  rows+=("| $name | $label | $replicas | $((batch * replicas)) | $threads | $ms | $images |\
 $speedup | $efficiency | ${wait:--} | ${collectives:--} |")
  echo "${rows[-1]}" >&2
}

started=$SECONDS
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
for name in lenet resnet18; do
  run "$name" "1 replica" 1 "$cores" single
  run "$name" "1 replica" 1 1 single
  run "$name" "2 CPU replicas (--cpu_replicas=2)" 2 1 threads
  run "$name" "2 processes (--world_size=2)" 2 1 processes
  run "$name" "ceiling: 2 unrelated 1-replica runs at once" 2 1 independent
done
run lenet "2 CPU replicas, no thread settings (train's cap)" 2 unset threads

{
  echo "# Data-parallel scaling on the CPU (\`bench/scaling.sh\`)"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), \`nproc\` = $cores," \
    "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')."
  echo "LeNet: batch 64 per replica, 1x28x28." \
    "ResNet-18: batch 8 per replica, 3x${resnet_size}x${resnet_size}."
  echo "DummyData inputs, SGD with momentum; ms/step from rank 0's \"Speed:\" lines after the first"
  echo "display interval ($lenet_iters LeNet and $resnet_iters ResNet-18 iterations per run)."
  echo
  echo "| net | configuration | replicas | global batch | threads per replica |" \
    "ms/step | images/s | vs 1 replica on all cores | scaling efficiency |" \
    "all-reduce wait per step | gradient all-reduces per step |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "- *vs 1 replica on all cores*: images/s over those of one replica threaded over all"
  echo "  $cores cores. Where threads speed one replica up little (small GEMMs), replicas"
  echo "  of one core each beat it; otherwise replication pays off where each replica has cores"
  echo "  (or a host) of its own."
  echo "- *scaling efficiency*: images/s over (replicas x images/s of one replica on 1"
  echo "  thread), i.e. how close N replicas on N cores come to N times one replica on one core."
  echo "- *ceiling*: two independent single-replica trainings side by side, no communication;"
  echo "  their summed images/s is what this machine's cores give two replicas. Where it is far"
  echo "  below 2x one replica on 1 thread, other work held the cores: judge the replicated rows"
  echo "  against it."
  echo "- *all-reduce wait*: the share of a step rank 0's replicas spent waiting for the gradient"
  echo "  all-reduce after backward (\"Replication:\" line)."
  echo "- The machine is a shared VM: compare rows of one run, not runs."
  echo "- Load average (1, 5, 15 min) before the runs: $load_before;" \
    "after: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "- Whole script: $((SECONDS - started)) s."
} > "$work/scaling.md"
mkdir -p bench/results
cp "$work/scaling.md" bench/results/scaling.md
cat bench/results/scaling.md
