#!/usr/bin/env bash
# Two builds' training step side by side (new engine vs old): `time` (TRAIN, DummyData) of each
# build run alternately in one invocation, at each thread count and precision, with the step,
# the layer types' times (time's "per layer type" lines) and peak RSS; prints a markdown table
# with the after/before ratios of the means.
#   bash bench/builds_ab.sh --before=DIR [--after=build] [--model=PROTOTXT] [--batch=N]
#                           [--iterations=N] [--rounds=N] [--threads="1 2"]
#                           [--precisions="FLOAT BFLOAT16"] [--types="BatchNorm Convolution"]
# A before build of another commit: git worktree add /tmp/before REV &&
#   make -C /tmp/before -j2 tools CPU_ONLY=1 BUILD_DIR=build_cpu   (then --before=/tmp/before/build_cpu)
set -euo pipefail
cd "$(dirname "$0")/.."
before=""
after=build
model=models/resnet50/train_val.prototxt
batch=16
iterations=3
rounds=3
threads_list="1 2"
precisions="FLOAT BFLOAT16"
types="BatchNorm Convolution"
for arg in "$@"; do
  case "$arg" in
    --before=*) before=${arg#--before=} ;;
    --after=*) after=${arg#--after=} ;;
    --model=*) model=${arg#--model=} ;;
    --batch=*) batch=${arg#--batch=} ;;
    --iterations=*) iterations=${arg#--iterations=} ;;
    --rounds=*) rounds=${arg#--rounds=} ;;
    --threads=*) threads_list=${arg#--threads=} ;;
    --precisions=*) precisions=${arg#--precisions=} ;;
    --types=*) types=${arg#--types=} ;;
    *) echo "builds_ab.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done
[ -n "$before" ] || { echo "builds_ab.sh: --before=DIR (a build directory) is required" >&2; exit 2; }
for dir in "$before" "$after"; do
  [ -x "$dir/tools/time" ] || { echo "builds_ab.sh: $dir/tools/time is missing" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One `time` run of build $1: prints "step_ms peak_rss_kib type_ms..." (forward + backward of
# each of $types, in order; 0 for a type the net lacks).
run() {
  local dir=$1 threads=$2 precision=$3 log="$work/log"
  /usr/bin/time -f "%M" -o "$work/rss" "$dir/tools/time" --model="$model" --stage=dummy \
    --batch="$batch" --iterations="$iterations" --threads="$threads" --precision="$precision" \
    > "$log" 2>&1 || { cat "$log" >&2; exit 1; }
  local step
  step=$(sed -n 's/.*Average Forward-Backward: \([0-9.e+-]*\) ms.*/\1/p' "$log")
  [ -n "$step" ] || { echo "builds_ab.sh: no step time from $dir (an older build?)" >&2; exit 1; }
  printf '%s %s' "$step" "$(cat "$work/rss")"
  for type in $types; do
    awk -v type="$type" -F'\t' '
      $1 ~ ("[ ]" type "$") && $2 ~ /^forward: / && $3 ~ /^backward: / {
        split($2, f, " "); split($3, b, " "); sum = f[2] + b[2]; found = 1 }
      END { printf " %s", found ? sum : 0 }' "$log"
  done
  echo
}

mean() { awk '{ s += $1 } END { printf "%.1f", s / NR }'; }

echo "Builds side by side: before \`$before\`, after \`$after\`; $(basename "$(dirname "$model")")" \
  "b$batch, $iterations iterations a run, $rounds alternating rounds, means; $(date -u +%F)," \
  "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)."
echo
header="| threads | precision | build | step ms | peak RSS MiB |"
rule="|---|---|---|---|---|"
for type in $types; do header="$header $type ms |"; rule="$rule---|"; done
echo "$header"
echo "$rule"
for precision in $precisions; do
  for threads in $threads_list; do
    : > "$work/before.txt"
    : > "$work/after.txt"
    for _ in $(seq "$rounds"); do
      run "$before" "$threads" "$precision" >> "$work/before.txt"
      run "$after" "$threads" "$precision" >> "$work/after.txt"
    done
    columns=$((2 + $(echo "$types" | wc -w)))
    for which in before after; do
      line="| $threads | $precision | $which |"
      for c in $(seq "$columns"); do
        value=$(awk -v c="$c" '{ print $c }' "$work/$which.txt" | mean)
        [ "$c" -eq 2 ] && value=$(awk -v v="$value" 'BEGIN { printf "%.0f", v / 1024 }')
        line="$line $value |"
      done
      echo "$line"
    done
    line="| $threads | $precision | after / before |"
    for c in $(seq "$columns"); do
      b=$(awk -v c="$c" '{ print $c }' "$work/before.txt" | mean)
      a=$(awk -v c="$c" '{ print $c }' "$work/after.txt" | mean)
      line="$line $(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }') |"
    done
    echo "$line"
  done
done
