#!/usr/bin/env bash
# LeNet training steps (models/lenet, DummyData, batch 64) on a quiet machine
# and on a loaded one (one busy `yes` per core), with the default threads and
# with one, for each OpenMP waiting setting: ms/iter from train's Speed lines
# (after the first, a warm-up) and the ratio default-threads / one-thread.
#   bench/loaded_threads.sh [ITERS=300]          (from the repository root)
# Environment: BUILD_DIR (default build); SETTINGS, a space-separated list of
# environment assignments to compare (default: the tools' own choice, "-",
# against libgomp's default spin count and a short spin). Writes
# bench/results/loaded_threads.md.
set -euo pipefail

iters="${1:-300}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${BUILD_DIR:-build}"
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
train="$build_dir/tools/train"
settings="${SETTINGS:-- GOMP_SPINCOUNT=300000 GOMP_SPINCOUNT=10000}"
cores="$(nproc)"
work="$(mktemp -d /tmp/loaded_threads.XXXXXX)"
busy=()
cleanup() {
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/solver.prototxt" <<EOF
net: "$root/models/lenet/lenet_dummy.prototxt"
base_lr: 0.01
momentum: 0.9
lr_policy: "fixed"
display: 50
max_iter: $iters
snapshot_after_train: false
random_seed: 1701
EOF

# ms/iter of one run: the mean of the Speed lines after the first.
step_ms() {  # step_ms <setting> <threads>
  local assignment=()
  [ "$1" != "-" ] && assignment=("$1")
  env "${assignment[@]}" "$train" --logtostderr --solver="$work/solver.prototxt" \
    --threads="$2" 2>&1 |
    awk -F'[(]| ms/iter' '/Speed:/ { n++; if (n > 1) { sum += $2; k++ } }
      END { if (k) printf "%.1f", sum / k; else print "nan" }'
}

declare -A ms
measure() {  # measure <load label>
  for setting in $settings; do
    for threads in 0 1; do
      ms["$1 $setting $threads"]="$(step_ms "$setting" "$threads")"
    done
  done
}

measure quiet
for ((i = 0; i < cores; i++)); do
  yes >/dev/null &
  busy+=($!)
done
measure loaded
for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null || true; done
busy=()

out="$root/bench/results/loaded_threads.md"
{
  echo "# LeNet steps on a quiet and a loaded machine (bench/loaded_threads.sh)"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M') UTC, $cores cores, $iters iterations a run; loaded: $cores" \
    "busy \`yes\` processes. ms/iter; ratio = default threads ($cores) / 1 thread."
  echo "Setting \`-\`: what the tools choose when the environment sets neither" \
    "OMP_WAIT_POLICY nor GOMP_SPINCOUNT."
  echo
  echo "| setting | quiet default | quiet 1 thread | quiet ratio | loaded default | loaded 1 thread | loaded ratio |"
  echo "|---|---|---|---|---|---|---|"
  for setting in $settings; do
    row="| \`$setting\`"
    for load in quiet loaded; do
      d="${ms["$load $setting 0"]}"
      o="${ms["$load $setting 1"]}"
      row="$row | $d | $o | $(awk -v d="$d" -v o="$o" 'BEGIN { printf "%.2f", d / o }')"
    done
    echo "$row |"
  done
} >"$out"
cat "$out"
