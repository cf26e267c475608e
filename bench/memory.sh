#!/usr/bin/env bash
# Memory benchmark (issue: memory planner). For each model at batch 32 (and
# ResNet-50 at 64), training:
#   - planned bytes of activations, gradients and layer buffers under NONE,
#     SLOTS and ARENA, and the liveness lower bound (build/tools/memory);
#   - peak resident memory of one real CPU training step (SGD with momentum)
#     with NONE and with ARENA, side by side in this run (build/tools/train);
#   - the same step in PyTorch for ResNet-50 (bench/torch_runner.py), when
#     python3-torch is installed (scripts/install_deps.sh --bench).
#   - the liveness bound in prototxt order and in the order the planner
#     chooses (issue 15), with the floor no order goes below, training and
#     test; `bash bench/memory.sh schedule` prints only that table (seconds).
# Writes bench/results/memory.md. Run after `make tools`; BUILD_DIR picks the
# build (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
out=bench/results/memory.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A copy of a train_val whose DummyData layers produce batches of $2.
with_batch() {
  python3 - "$1" "$2" > "$3" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
batch = sys.argv[2]
def fix(block):
    return re.sub(r'(shape \{\s*dim: )\d+', r'\g<1>' + batch, block.group(0))
print(re.sub(r'dummy_data_param \{.*?\n  \}', fix, text, flags=re.S))
PY
}

solver_for() {  # net strategy -> solver prototxt text
  cat <<SOLVER
net: "$1"
base_lr: 0.0001
momentum: 0.9
weight_decay: 0.0005
lr_policy: "fixed"
max_iter: 1
display: 1
random_seed: 1
snapshot_after_train: false
memory_optimization: $2
SOLVER
}

peak_rss_mib() {  # command... -> peak RSS in MiB
  /usr/bin/time -f "%M" -o "$work/rss" "$@" > "$work/log" 2>&1 || { cat "$work/log" >&2; return 1; }
  echo $(( $(cat "$work/rss") / 1024 ))
}

mib() { python3 -c "print(f'{$1 / 2**20:.1f}')"; }

# The schedule the planner chooses (issue 15): the bound in prototxt order,
# in the chosen order, and the floor under every order the layers' reads,
# writes and order groups allow (prototxt order meeting it is optimal).
schedule_table() {
  echo "| model | batch | phase | bound, prototxt order MiB | bound, chosen order MiB | floor, any order MiB | layers moved | ARENA, prototxt order MiB | ARENA, chosen order MiB |"
  echo "|---|---|---|---|---|---|---|---|---|"
  local name model batch phase json
  while read -r name model batch; do
    with_batch "$model" "$batch" "$work/net.prototxt"
    for phase in TRAIN TEST; do
      json=$("$build/tools/memory" --model="$work/net.prototxt" --stage=dummy --phase=$phase --json)
      python3 -c "
import json, sys
r = json.loads(sys.argv[1])
m = lambda b: f'{b / 2**20:.1f}'
print(f'| $name | $batch | $phase | {m(r[\"prototxt_lower_bound_bytes\"])} | {m(r[\"lower_bound_bytes\"])} |'
      f' {m(r[\"order_free_bound_bytes\"])} | {r[\"moved_layers\"]} | {m(r[\"prototxt_arena_bytes\"])} | {m(r[\"arena_bytes\"])} |')" "$json"
    done
  done <<MODELS
GoogLeNet models/googlenet/train_val.prototxt 32
SqueezeNet-1.1 models/squeezenet1.1/train_val.prototxt 32
ResNet-50 models/resnet50/train_val.prototxt 32
ResNet-50 models/resnet50/train_val.prototxt 64
VGG-16 models/vgg16/train_val.prototxt 32
DenseNet-121 models/densenet121/train_val.prototxt 32
MODELS
}

if [ "${1:-}" = schedule ]; then
  schedule_table
  exit 0
fi

{
  echo "# Memory planning benchmark"
  echo
  echo "Run: \`bash bench/memory.sh\` on $(nproc) cores, $(date -u +%Y-%m-%d)."
  echo "Planned bytes cover activations, gradients and layer buffers (not params); peak RSS is"
  echo "one real training step with SGD + momentum on the CPU, whole process."
  echo
  echo "| model | batch | NONE MiB | SLOTS MiB | ARENA MiB | lower bound MiB | ARENA/bound | ARENA/NONE | params+grads MiB | RSS NONE MiB | RSS ARENA MiB | RSS ratio |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
} > "$out"

run_model() {  # name model-file batch
  local name=$1 model=$2 batch=$3
  with_batch "$model" "$batch" "$work/net.prototxt"
  local json
  json=$("$build/tools/memory" --model="$work/net.prototxt" --stage=dummy --phase=TRAIN --json)
  read -r none slots arena bound persistent < <(python3 -c "
import json, sys
r = json.loads(sys.argv[1])
print(r['naive_bytes'], r['slots_bytes'], r['arena_bytes'], r['lower_bound_bytes'], r['persistent_bytes'])" "$json")
  local rss=()
  for strategy in NONE ARENA; do
    solver_for "$work/net.prototxt" "$strategy" > "$work/solver.prototxt"
    rss+=("$(peak_rss_mib "$build/tools/train" --solver="$work/solver.prototxt" --stage=dummy)")
  done
  echo "| $name | $batch | $(mib "$none") | $(mib "$slots") | $(mib "$arena") | $(mib "$bound") |" \
       "$(python3 -c "print(f'{$arena/$bound:.3f}')") | $(python3 -c "print(f'{$arena/$none:.3f}')") |" \
       "$(mib "$persistent") | ${rss[0]} | ${rss[1]} | $(python3 -c "print(f'{${rss[1]}/${rss[0]}:.3f}')") |" >> "$out"
  echo "$name batch $batch done" >&2
}

run_model LeNet models/lenet/lenet_dummy.prototxt 32
run_model AlexNet models/alexnet/train_val.prototxt 32
run_model GoogLeNet models/googlenet/train_val.prototxt 32
run_model ResNet-50 models/resnet50/train_val.prototxt 32
run_model ResNet-50 models/resnet50/train_val.prototxt 64
run_model VGG-16 models/vgg16/train_val.prototxt 32
run_model DenseNet-121 models/densenet121/train_val.prototxt 32

# Recomputation (issue 15): the smallest arena recomputation reaches, and a
# real training step under that budget against one without, side by side:
# peak RSS and step time (build/tools/train's Speed line over iterations 3
# and 4, after oneDNN's first-use set-up).
{
  echo
  echo "Recomputation under a memory_budget: the smallest ARENA the planner reaches by dropping"
  echo "activations after forward and recomputing them in backward, and a real step at that budget."
  echo
  echo "| model | batch | ARENA MiB | recomputed MiB | ratio | ×NONE | extra forward % | RSS ARENA MiB | RSS recomputed MiB | step ms | step ms recomputed | time ratio |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
} >> "$out"

step_ms() {  # net [budget] -> ms per training iteration (train's Speed line, iterations 3-4)
  cat > "$work/timed_solver.prototxt" <<SOLVER
net: "$1"
base_lr: 0.0001
momentum: 0.9
lr_policy: "fixed"
max_iter: 4
display: 2
random_seed: 1
snapshot_after_train: false
SOLVER
  "$build/tools/train" --solver="$work/timed_solver.prototxt" --stage=dummy ${2:+--memory_budget=$2} 2>&1 |
    sed -n 's/.*Speed: .* iter\/s (\([0-9.]*\) ms\/iter).*/\1/p' | tail -1
}

run_recompute() {  # name model-file batch
  local name=$1 model=$2 batch=$3
  with_batch "$model" "$batch" "$work/net.prototxt"
  local json
  json=$("$build/tools/memory" --model="$work/net.prototxt" --stage=dummy --phase=TRAIN --json \
         --memory_budget=smallest)
  read -r none arena recomputed extra < <(python3 -c "
import json, sys
r = json.loads(sys.argv[1])
print(r['naive_bytes'], r['arena_bytes'], r['recompute_arena_bytes'],
      100 * r['recompute_extra_flops'] / r['forward_flops'])" "$json")
  solver_for "$work/net.prototxt" ARENA > "$work/solver.prototxt"
  local rss_arena rss_recomputed
  rss_arena=$(peak_rss_mib "$build/tools/train" --solver="$work/solver.prototxt" --stage=dummy)
  rss_recomputed=$(peak_rss_mib "$build/tools/train" --solver="$work/solver.prototxt" \
                   --stage=dummy --memory_budget="$recomputed")
  local ms ms_recomputed
  ms=$(step_ms "$work/net.prototxt")
  ms_recomputed=$(step_ms "$work/net.prototxt" "$recomputed")
  echo "| $name | $batch | $(mib "$arena") | $(mib "$recomputed") |" \
       "$(python3 -c "print(f'{$recomputed/$arena:.3f}')") | $(python3 -c "print(f'{$recomputed/$none:.3f}')") |" \
       "$(python3 -c "print(f'{$extra:.0f}')") | $rss_arena | $rss_recomputed | $ms | $ms_recomputed |" \
       "$(python3 -c "print(f'{$ms_recomputed/$ms:.2f}')") |" >> "$out"
  echo "$name batch $batch recomputation done" >&2
}

run_recompute GoogLeNet models/googlenet/train_val.prototxt 32
run_recompute ResNet-50 models/resnet50/train_val.prototxt 32
run_recompute ResNet-50 models/resnet50/train_val.prototxt 64
run_recompute VGG-16 models/vgg16/train_val.prototxt 32
run_recompute DenseNet-121 models/densenet121/train_val.prototxt 32

{
  echo
  echo "The schedule the planner chooses: the liveness bound in prototxt order and in the chosen"
  echo "order, and the floor no order the layers' dependencies allow goes below."
  echo
  schedule_table
} >> "$out"

if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  line=$(/usr/bin/python3 bench/torch_runner.py models/resnet50/train_val.prototxt --stage dummy \
         --batch 32 --threads "$(nproc)" --iters 1 --warmup 0 | grep '^RESULT')
  {
    echo
    echo "PyTorch peer, ResNet-50 batch 32, one training step (no momentum, includes ~260 MiB for importing torch):"
    echo "\`$line\`"
  } >> "$out"
fi
cat "$out"
