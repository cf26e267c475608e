#!/usr/bin/env bash
# Fused BatchNorm + Scale + ReLU (NetParameter.fuse_layers) against the same net with every layer
# apart: ResNet-50's training step on the CPU (`time`, TRAIN, DummyData), both variants run
# alternately in one invocation, at each thread count and precision; writes
# bench/results/fusion.md with the step, the share of the BatchNorm and Scale layers and of the
# ReLUs after them (ResNet-50's names: conv1_relu, res*_branch2[ab]_relu) and peak RSS.
#   bash bench/fusion.sh [--build=DIR] [--model=PROTOTXT] [--batch=N] [--iterations=N]
#                        [--rounds=N] [--threads="1 2"] [--precisions="FLOAT BFLOAT16"]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
model=models/resnet50/train_val.prototxt
batch=16
iterations=4
rounds=2
threads_list="1 2"
precisions="FLOAT BFLOAT16"
for arg in "$@"; do
  case "$arg" in
    --build=*) build=${arg#--build=} ;;
    --model=*) model=${arg#--model=} ;;
    --batch=*) batch=${arg#--batch=} ;;
    --iterations=*) iterations=${arg#--iterations=} ;;
    --rounds=*) rounds=${arg#--rounds=} ;;
    --threads=*) threads_list=${arg#--threads=} ;;
    --precisions=*) precisions=${arg#--precisions=} ;;
    *) echo "fusion.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done
tool="$build/tools/time"
[ -x "$tool" ] || { echo "fusion.sh: $tool is missing: make tools BUILD_DIR=$build" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Text-format fields may come in any order: the apart variant is the net plus one line.
apart_model="$work/apart.prototxt"
{ echo "fuse_layers: false"; cat "$model"; } > "$apart_model"

# One `time` run: prints "step_ms bn_scale_relu_ms peak_rss_kib".
run() {
  local net=$1 threads=$2 precision=$3 log="$work/log"
  /usr/bin/time -f "rss %M" "$tool" --model="$net" --stage=dummy --batch="$batch" \
    --iterations="$iterations" --threads="$threads" --precision="$precision" >"$log" 2>&1
  awk '
    /Average Forward-Backward:/ { step = $(NF - 1) }
    /\] +((bn|scale)[^ ]*|[^ ]*(conv1|branch2[ab])_relu)\t(forward|backward): / { pair += $(NF - 1) }
    /^rss / { rss = $2 }
    END { printf "%.1f %.1f %d\n", step, pair, rss }' "$log"
}

out=bench/results/fusion.md
{
  echo "# Fused BatchNorm + Scale + ReLU vs apart ($(basename "$(dirname "$model")"), batch $batch)"
  echo
  echo "$(date -u +%Y-%m-%d), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs));"
  echo "\`time --stage=dummy --iterations=$iterations\`, the two variants alternating, $rounds rounds;"
  echo "BN+Scale+ReLU: the forward and backward times of every BatchNorm and Scale layer and of the ReLUs after them, summed."
  echo
  echo "| threads | precision | apart step ms | fused step ms | fused / apart | apart BN+Scale+ReLU ms | fused BN+Scale+ReLU ms | apart peak RSS MiB | fused peak RSS MiB |"
  echo "|---|---|---|---|---|---|---|---|---|"
} > "$out"
for threads in $threads_list; do
  for precision in $precisions; do
    apart_runs=() fused_runs=()
    for ((round = 0; round < rounds; ++round)); do
      apart_runs+=("$(run "$apart_model" "$threads" "$precision")")
      fused_runs+=("$(run "$model" "$threads" "$precision")")
    done
    # Each variant's fastest round (the machine is shared; the slowest are noise).
    best() { printf '%s\n' "$@" | sort -n | head -1; }
    read -r a_step a_pair a_rss <<<"$(best "${apart_runs[@]}")"
    read -r f_step f_pair f_rss <<<"$(best "${fused_runs[@]}")"
    awk -v t="$threads" -v p="$precision" -v as="$a_step" -v fs="$f_step" -v ap="$a_pair" \
      -v fp="$f_pair" -v ar="$a_rss" -v fr="$f_rss" 'BEGIN {
        printf "| %s | %s | %.1f | %.1f | %.3f | %.1f | %.1f | %.0f | %.0f |\n",
               t, p, as, fs, fs / as, ap, fp, ar / 1024, fr / 1024 }' >> "$out"
    tail -1 "$out"
  done
done
echo "wrote $out"
