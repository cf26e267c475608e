#!/usr/bin/env bash
# The GPU benchmark, for a node lent for a few minutes: run from the unpacked bundle
# (make bundle; see bench/README.md) or from a source tree with a CUDA build in BUILD_DIR
# (default build/). In at most ~8 minutes it writes bench/results/gpu_<gpu name>.md, under
# $OUT when set (the device machine's output folder), else under the bundle or tree:
#   1. the GPU (nvidia-smi: name, driver, memory), the build (device_query) and the roofline:
#      cuBLAS's 8192^3 product in FP32, TF32, FLOAT16 and BFLOAT16 (device_query --gemm);
#   2. the Gpu* tests of test_all (pass, skip, fail and crash counts, each failure and crash
#      named): bench/run_gtests.sh goes on past a test that ends the process;
#   3. training throughput of ResNet-50, GoogLeNet and AlexNet (the zoo's train_val with
#      --stage=dummy: DummyData inputs) at batch 64 and 128, from `time`'s forward+backward
#      average: img/s = batch / time. The device time where `time` reports one, else the host
#      time (the table says which). FP32 rows (--deterministic: plain FP32, deterministic
#      cuDNN algorithms), then FLOAT16 and BFLOAT16 (--precision), TF32 (time's default
#      GPU math), TF32_APART (TF32 with fuse_layers: false: BatchNorm and Scale apart) and
#      FLOAT16_NCHW (FLOAT16 with channels_last: false: every blob in Caffe's layout) rows,
#      which read "not supported yet" where the tool refuses or has no switch;
#      then, for the first model and batch, the 10 layers with the most time per precision;
#      PyTorch beside it where python3 has torch with CUDA (bench/torch_runner.py: ResNet-50 at
#      the first batch in FP32, TF32 and autocast FLOAT16 and BFLOAT16, channels-last, its peak
#      device memory);
#      and the host's floor: ResNet-50 at batch 8, where the device waits for the host; and
#      the solver's own step (train, BFLOAT16), its losses read at displays vs every iteration;
#   4. device memory: `memory --gpu=0` for ResNet-50 at batch 64, and nvidia-smi's;
#   5. the Data layer: 2000 synthetic ImageNet-sized JPEGs in an LMDB (bench/data_throughput
#      --make_source), the host's decode rate on one core, and ResNet-50 trained from them on
#      the GPU in TF32 (img/s, and the steps that waited for data);
#   6. with 2 or more GPUs: the two-GPU replica tests and `train` 1 vs N GPUs on ResNet-50.
# Each step runs under its own timeout, and a step that would start past the overall budget
# (GPU_SH_BUDGET seconds, default 450) is skipped with a line saying so; progress lines go to
# stderr. --dry (implied where no GPU is found) runs every step on the CPU on tiny batches and
# one iteration, to prove the script, and writes gpu_<name>_dry.md. GPU_SH_PRECISIONS picks the
# throughput rows (default "FP32 FLOAT16 FLOAT16_NCHW BFLOAT16 TF32 TF32_APART"), GPU_SH_MODELS and
# GPU_SH_BATCHES the nets and batches (defaults above); with $OUT set (a lent device machine)
# every step's log is packed into $OUT/gpu_sh_logs.tar.gz.
#   bench/gpu.sh [--dry]
set -uo pipefail

dry=0
for arg in "$@"; do
  case "$arg" in
    --dry) dry=1 ;;
    *) echo "usage: bench/gpu.sh [--dry]" >&2; exit 2 ;;
  esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ -x tools/time ]; then bin=.; else bin=${BUILD_DIR:-build}; fi
for tool in tools/time tools/memory tools/train tools/device_query test/test_all; do
  [ -x "$bin/$tool" ] || { echo "gpu.sh: $root/$bin/$tool is missing (make all, or unpack the bundle)" >&2; exit 1; }
done
# A lent machine may keep cuBLAS, cuDNN and NCCL in a Python environment rather than on the
# loader's path: add the folders holding whichever the tools cannot find.
missing=$(ldd "$bin/tools/time" 2>/dev/null | sed -n 's/^[[:space:]]*\(lib[^ ]*\) => not found.*/\1/p')
for library in $missing; do
  found=$(find /usr/local /opt /usr/lib -name "$library" 2>/dev/null | head -1)
  [ -n "$found" ] && export LD_LIBRARY_PATH="$(dirname "$found")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
budget=${GPU_SH_BUDGET:-450}
start=$SECONDS

# ---- the GPUs ----
gpus=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L | grep -c '^GPU ')
fi
if [ "$gpus" -eq 0 ]; then
  dry=1
  gpu_name="no GPU"
  gpu_flag=
else
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  gpu_flag=--gpu=0
fi
slug=$(echo "$gpu_name" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '_' | sed 's/^_*//; s/_*$//')
if [ "$dry" -eq 1 ]; then
  slug=${slug}_dry
  batches="1"; iterations=1; step_timeout=120; models="resnet50 googlenet alexnet"
else
  batches=${GPU_SH_BATCHES:-64 128}; iterations=10; step_timeout=90
  models=${GPU_SH_MODELS:-resnet50 googlenet alexnet}
fi
results=${OUT:-$root}/bench/results
mkdir -p "$results"
report=$results/gpu_$slug.md
log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT
: >"$report"

say() { echo "$*" >>"$report"; }
progress() { echo "[gpu.sh $((SECONDS - start))s] $*" >&2; }
# run_step SECONDS LOG COMMAND...: the command under `timeout`, its output in LOG; returns its
# status (124: timed out). Refuses (status 125) once the budget is spent.
run_step() {
  local limit=$1 log=$2
  shift 2
  if [ $((SECONDS - start + 5)) -gt "$budget" ]; then
    echo "skipped: the ${budget}s budget is spent" >"$log"
    return 125
  fi
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
}
# The mean ms/iter of train's "Speed:" lines in LOG, the first display interval (warm-up) left out.
speed_ms() {
  grep -oE 'Speed: [0-9.]+ iter/s \([0-9.]+ ms/iter\)' "$1" | tail -n +2 |
    sed 's/.*(\([0-9.]*\) ms.*/\1/' | awk '{ s += $1; n++ } END { if (n) printf "%.1f", s / n }'
}
# A log line without glog's prefix ("I1127 10:48:48.930222 20269 cli.cpp:232] ", the year
# after the I where glog was asked for it).
strip_glog() { sed 's/^[IWEF][0-9]\{4,8\} [0-9:.]* *[0-9]* [a-z_0-9]*\.[a-z]*:[0-9]*\] //'; }
# Why a step failed, in a few words: timeout, budget, or its last error line.
failure() {
  local status=$1 log=$2
  case $status in
    124 | 137) echo "timed out" ;;
    125) echo "skipped (budget spent)" ;;
    *) local why
       why=$(grep -E '^[EF][0-9]{4,8} |Check failed|[Ee]rror' "$log" | tail -1 | strip_glog | cut -c1-160)
       echo "${why:-exit status $status}" | sed 's/|/\\|/g' ;;
  esac
}

# run_tests FILTER NAME SECONDS: test_all's tests matching FILTER through bench/run_gtests.sh,
# which goes on past a test that ends the process (a failed CUDA check aborts), so one crash on
# a first run hides no other result; its summary lines (or why it did not finish) in the report.
run_tests() {
  local summary="$log_dir/$2_summary" status
  run_step $(($3 + 20)) "$summary" bash bench/run_gtests.sh "$bin/test/test_all" "$1" \
    "$log_dir/$2" "$3"
  status=$?
  if grep -q ' passed, ' "$summary"; then
    cat "$summary" >>"$report"
  else
    say "Did not finish: $(failure "$status" "$summary")"
  fi
}

progress "writing $report ($([ "$dry" -eq 1 ] && echo "dry run: CPU, tiny batches" || echo "$gpus GPU(s)"))"
say "# GPU benchmark: $gpu_name$([ "$dry" -eq 1 ] && echo " (dry run)")"
say ""
say "$(date -u '+%F %H:%M UTC'), $(hostname), bench/gpu.sh from $root"
if head -1 README.md 2>/dev/null | grep -q '^# demitasse-bundle'; then
  sed -n 3p README.md | sed 's/^/build: /' >>"$report"   # make_bundle.sh's line
else
  say "build: $bin of $(git describe --always --dirty 2>/dev/null || echo 'an unknown commit')"
fi
say ""

# ---- 1. the device ----
progress "1/6 device"
if [ "$gpus" -gt 0 ]; then
  say '| GPU | driver | memory | compute capability |'
  say '|---|---|---|---|'
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader |
    sed 's/, /|/g; s/^/|/; s/$/|/' >>"$report"
else
  say "No GPU found (nvidia-smi missing or lists none): every step runs on the CPU, tiny."
fi
if [ "$gpus" -gt 0 ]; then query_flags=(--gpu=0 --gemm); else query_flags=(); fi
run_step 60 "$log_dir/query" "$bin/tools/device_query" "${query_flags[@]}"
say ""
say '```'
grep -vE '^(W|E)[0-9]{4}' "$log_dir/query" | strip_glog | grep -v '^GEMM ' |
  head -20 >>"$report"
say '```'
if grep -q 'GEMM ' "$log_dir/query"; then
  say ""
  say "Roofline: cuBLAS's own square product (device_query --gemm; fp32 sums, random data)"
  say ""
  say "| precision | n | ms | TFLOP/s |"
  say "|---|---|---|---|"
  strip_glog <"$log_dir/query" |
    sed -n 's/^GEMM \([0-9]*\)^3 \([A-Z0-9]*\): \([0-9.e+-]*\) ms, \([0-9.e+-]*\) TFLOP\/s$/| \2 | \1 | \3 | \4 |/p' \
      >>"$report"
fi

# ---- 2. the Gpu* tests ----
progress "2/6 Gpu* tests"
say ""
say "## Gpu* tests"
say ""
run_tests '*Gpu*' tests $((step_timeout * 2))

# ---- 3. throughput ----
# time_row MODEL BATCH PRECISION: one table row.
# Precisions found to run no layer narrower than FLOAT on this device: their later rows are
# not timed again (device time is scarce), only marked.
all_float=""
time_row() {
  local model=$1 batch=$2 precision=$3 flags=() log
  log="$log_dir/time_${model}_${batch}_$precision"
  if [[ " $all_float " == *" ${precision%_NCHW} "* ]]; then
    say "| $model | $batch | $precision | not supported yet: every layer runs FLOAT here (see above) | | |"
    return
  fi
  # FP32 is the deterministic path (plain FP32, deterministic cuDNN algorithms); TF32 is
  # time's default math (tensor cores on Ampere and newer, measured cuDNN algorithms).
  # TF32_APART: TF32 with every layer apart (fuse_layers: false), the row before BatchNorm
  # ran the Scale after it in its own passes. FLOAT16_NCHW: FLOAT16 with channels_last:
  # false, the row before 16-bit blobs went channels last (NHWC) between the layers that read it.
  local deterministic=0 net="models/$model/train_val.prototxt"
  "$bin/tools/time" --help 2>&1 | grep -q -- '-deterministic' && deterministic=1
  case $precision in
    FP32) [ "$deterministic" -eq 1 ] && flags=(--deterministic) ;;
    FLOAT16 | BFLOAT16) flags=(--precision="$precision") ;;
    FLOAT16_NCHW)
      flags=(--precision=FLOAT16)
      net="$log_dir/${model}_nchw.prototxt"
      { echo "channels_last: false"; cat "models/$model/train_val.prototxt"; } >"$net" ;;
    TF32 | TF32_APART)
      if [ "$deterministic" -eq 0 ]; then
        say "| $model | $batch | $precision | not supported yet (time has no --deterministic, so no TF32 default) | | |"
        return
      fi
      if [ "$precision" = TF32_APART ]; then
        net="$log_dir/${model}_apart.prototxt"
        { echo "fuse_layers: false"; cat "models/$model/train_val.prototxt"; } >"$net"
      fi ;;
  esac
  run_step "$step_timeout" "$log" "$bin/tools/time" --model="$net" \
    --stage=dummy --batch="$batch" --iterations="$iterations" $gpu_flag "${flags[@]}"
  local status=$?
  # A device-timed line wins over the host's "Average Forward-Backward: X ms."
  local line clock=host
  line=$(grep 'Average Forward-Backward' "$log" | grep -i device | tail -1)
  if [ -n "$line" ]; then clock=device; else line=$(grep 'Average Forward-Backward' "$log" | tail -1); fi
  local ms
  ms=$(echo "$line" | sed -n 's/.*: \([0-9.e+-]*\) ms.*/\1/p')
  if [ "$status" -ne 0 ] || [ -z "$ms" ]; then
    if [ "$precision" != FP32 ] && [ "$status" -ne 124 ] && [ "$status" -ne 125 ]; then
      say "| $model | $batch | $precision | not supported yet: $(failure "$status" "$log") | | |"
    else
      say "| $model | $batch | $precision | $(failure "$status" "$log") | | |"
    fi
    return
  fi
  # "Net 'x': N of N layers run wider types than the net asks" and no "... blobs are stored
  # in 16 bits": nothing was computed or stored in 16 bits, so the row timed FLOAT again.
  if [ "$precision" = FLOAT16 ] || [ "$precision" = BFLOAT16 ] || [ "$precision" = FLOAT16_NCHW ]; then
    local wider
    wider=$(sed -n 's/.*: \([0-9]*\) of \([0-9]*\) layers run wider types.*/\1 \2/p' "$log" | head -1)
    if [ -n "$wider" ] && [ "${wider% *}" = "${wider#* }" ] &&
      ! grep -q 'blobs are stored in 16 bits' "$log"; then
      all_float="$all_float $precision"
      say "| $model | $batch | $precision | not supported yet: every layer ran FLOAT (${wider% *} of ${wider#* } wider than asked; timed as FP32 at $(printf '%.1f' "$ms") ms) | | |"
      return
    fi
  fi
  local rate
  rate=$(awk -v b="$batch" -v ms="$ms" 'BEGIN { printf "%.1f", b * 1000 / ms }')
  say "| $model | $batch | $precision | $rate | $(printf '%.1f' "$ms") | $clock |"
}
say ""
say "## Training throughput (forward + backward, DummyData; $iterations timed iterations after a warm-up one)"
say ""
say "| model | batch | precision | img/s | ms/iter | clock |"
say "|---|---|---|---|---|---|"
for precision in ${GPU_SH_PRECISIONS:-FP32 FLOAT16 FLOAT16_NCHW BFLOAT16 TF32 TF32_APART}; do
  for model in $models; do
    for batch in $batches; do
      progress "3/6 time $model batch $batch $precision"
      time_row "$model" "$batch" "$precision"
    done
  done
done

# PyTorch beside us: the same prototxt through bench/torch_runner.py, ResNet-50 at the first
# batch, each step timed between two torch.cuda.synchronize() calls.
runner=$root/bench/torch_runner.py
if [ "$dry" -eq 0 ] && [ -f "$runner" ] &&
  python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  peer_batch=${batches%% *}
  say ""
  say "PyTorch $(python3 -c 'import torch; print(torch.__version__)') beside it (bench/torch_runner.py, resnet50, batch $peer_batch; cuDNN benchmark mode; 10 steps after 3):"
  say ""
  say "| precision | img/s (min step) | img/s (mean step) | peak device MiB |"
  say "|---|---|---|---|"
  for setting in "FP32:--math fp32" "TF32:--math tf32" "FLOAT16 autocast, channels-last:--math tf32 --autocast fp16 --channels_last" \
    "BFLOAT16 autocast, channels-last:--math tf32 --autocast bf16 --channels_last"; do
    label=${setting%%:*}
    progress "3/6 PyTorch resnet50 $label"
    log="$log_dir/torch_${label%%[ ,]*}"
    # shellcheck disable=SC2086 # the flags split on purpose
    run_step "$step_timeout" "$log" python3 "$runner" "$root/models/resnet50/train_val.prototxt" \
      --stage dummy --batch "$peer_batch" --device cuda --iters 10 --warmup 3 ${setting#*:}
    status=$?
    result=$(grep '^RESULT' "$log" | tail -1)
    if [ "$status" -ne 0 ] || [ -z "$result" ]; then
      say "| $label | $(failure "$status" "$log") | | |"
      continue
    fi
    field() { echo "$result" | sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
    say "| $label | $(awk -v b="$peer_batch" -v ms="$(field min_ms)" 'BEGIN { printf "%.1f", b * 1000 / ms }') | $(awk -v b="$peer_batch" -v ms="$(field mean_ms)" 'BEGIN { printf "%.1f", b * 1000 / ms }') | $(field peak_gpu_mib) |"
  done
fi

# Where a step's time goes: the layers of the first model's first batch with the most
# forward + backward time (time's per-layer averages), and the fallbacks logged, per precision.
hot_layers() {
  local log=$1
  [ -f "$log" ] || return
  say ""
  say "### ${log##*/time_}: the 10 slowest layers (forward + backward ms per step)"
  say ""
  say "| layer | forward | backward | total |"
  say "|---|---|---|---|"
  strip_glog <"$log" | awk -F'\t' '
    /\t(forward|backward): / {
      name = $1; gsub(/^ +/, "", name)
      split($2, f, " "); ms = f[2] + 0
      if (f[1] == "forward:") fwd[name] += ms; else bwd[name] += ms
      seen[name] = 1
    }
    END { for (n in seen) printf "%s\t%.3f\t%.3f\t%.3f\n", n, fwd[n], bwd[n], fwd[n] + bwd[n] }' |
    sort -t"$(printf '\t')" -k4 -g -r | head -10 | awk -F'\t' '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' >>"$report"
  local fallbacks
  fallbacks=$(grep -c 'using the CAFFE engine' "$log")
  [ "$fallbacks" -gt 0 ] && say "" && say "$fallbacks layer(s) fell back to the CAFFE engine (see the log)."
}
say ""
say "## Where the time goes: ${models%% *}, batch ${batches%% *}"
for precision in ${GPU_SH_PRECISIONS:-FP32 FLOAT16 FLOAT16_NCHW BFLOAT16 TF32 TF32_APART}; do
  hot_layers "$log_dir/time_${models%% *}_${batches%% *}_$precision"
done
# The host's floor: at batch 8 the device waits for the host's launches, so the two clocks
# agree and say how long the host takes per step (time's default GPU math).
if [ "$dry" -eq 0 ]; then
  progress "3/6 host floor ${models%% *} batch 8"
  log="$log_dir/time_${models%% *}_8_host_floor"
  run_step "$step_timeout" "$log" "$bin/tools/time" --model="models/${models%% *}/train_val.prototxt" \
    --stage=dummy --batch=8 --iterations="$iterations" $gpu_flag
  status=$?
  line=$(grep 'Average Forward-Backward' "$log" | tail -1 | strip_glog)
  say ""
  say "Host floor (${models%% *}, batch 8, forward + backward): ${line:-$(failure "$status" "$log")}"
fi

# The solver's own step (train: forward, backward and update), ResNet-50 at its dummy batch (32)
# in BFLOAT16: its losses read back at each display (pending_losses: 50, the default), against
# each iteration's read at once (pending_losses: 1: the host waits for every forward pass), and
# its passes replayed from CUDA graphs (--cuda_graph: a few launches a pass instead of thousands).
if [ "$dry" -eq 0 ]; then
  say ""
  say "The solver's step (train, ResNet-50, dummy batch 32, BFLOAT16, 40 iterations, display 10):"
  say ""
  say "| losses read back | CUDA graph | ms/iter | img/s |"
  say "|---|---|---|---|"
  for variant in 50:no 1:no 50:yes; do
    pending=${variant%%:*}
    graph=${variant##*:}
    progress "3/6 train resnet50 BFLOAT16 pending_losses $pending cuda_graph $graph"
    solver="$log_dir/solver_pending_$pending.prototxt"
    printf 'net: "%s"\nbase_lr: 0.01\nmomentum: 0.9\nlr_policy: "fixed"\nmax_iter: 40\ndisplay: 10\nsnapshot_after_train: false\npending_losses: %s\n' \
      "$root/models/resnet50/train_val.prototxt" "$pending" >"$solver"
    log="$log_dir/train_pending_${pending}_graph_$graph"
    graph_flag=$([ "$graph" = yes ] && echo "--cuda_graph" || echo "--nocuda_graph")
    run_step "$step_timeout" "$log" "$bin/tools/train" --solver="$solver" --stage=dummy \
      --precision=BFLOAT16 $graph_flag $gpu_flag
    status=$?
    ms=$(speed_ms "$log")
    label=$([ "$pending" -eq 1 ] && echo "each iteration" || echo "at displays")
    if [ -n "$ms" ]; then
      say "| $label | $graph | $ms | $(awk -v ms="$ms" 'BEGIN { printf "%.1f", 32 * 1000 / ms }') |"
    else
      say "| $label | $graph | $(failure "$status" "$log") | |"
    fi
  done
  captured=$(grep -h 'CUDA graph: ' "$log_dir"/train_pending_50_graph_yes | strip_glog | head -5)
  if [ -n "$captured" ]; then
    say ""
    echo "$captured" | while IFS= read -r line; do say "- $line"; done
  fi
fi

# ---- 4. device memory ----
progress "4/6 memory"
memory_batch=${batches%% *}
run_step "$step_timeout" "$log_dir/memory" "$bin/tools/memory" \
  --model=models/resnet50/train_val.prototxt --stage=dummy --phase=TRAIN --batch="$memory_batch" $gpu_flag
status=$?
say ""
say "## Memory: ResNet-50, batch $memory_batch, TRAIN"
say ""
if [ "$status" -eq 0 ]; then
  say '```'
  grep -vE '^(W|E)[0-9]{4}' "$log_dir/memory" | strip_glog | head -25 >>"$report"
  say '```'
else
  say "memory: $(failure "$status" "$log_dir/memory")"
fi
if [ "$gpus" -gt 0 ]; then
  say ""
  say "nvidia-smi after the runs (used / total MiB per GPU):"
  nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv,noheader | sed 's/^/- /' >>"$report"
fi

# ---- 5. the Data layer: JPEGs decoded on the host, normalised on the GPU ----
progress "5/6 data"
say ""
say "## Data: ResNet-50 fed by the Data layer from JPEGs"
say ""
if [ "$dry" -eq 1 ]; then data_count=64; data_steps=2; else data_count=2000; data_steps=30; fi
data_batch=${batches%% *}
data_transform="transform_param { random_resized_crop: true crop_size: 224 mirror: true mean_value: 104 mean_value: 117 mean_value: 123 scale: 0.017 }"
if [ ! -x "$bin/bench/data_throughput" ]; then
  say "Skipped: $bin/bench/data_throughput is missing (make bench, or the bundle)."
elif run_step 120 "$log_dir/data_make" "$bin/bench/data_throughput" --make_source="$data_count" \
  --source="$log_dir/jpeg_lmdb"; then
  sed -n 's/^wrote /Made /p' "$log_dir/data_make" >>"$report"
  # The per-core rate follows the core: name it and its clock, to compare hosts.
  cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
  cpu_mhz=$(sed -n 's/^cpu MHz[[:space:]]*: //p' /proc/cpuinfo | sort -n | tail -1)
  say "Host CPU: ${cpu_model:-unknown}, $(nproc) cores, the fastest at ${cpu_mhz:-?} MHz when read (/proc/cpuinfo)."
  say "Transform: RandomResizedCrop 224 + mirror + mean/scale (byte batches: the mean and scale"
  say "run on the device). The host's decode alone, one thread, CPU Forward (img/s per core):"
  OMP_WAIT_POLICY=passive run_step 60 "$log_dir/data_core" "$bin/bench/data_throughput" \
    --source="$log_dir/jpeg_lmdb" --transform="$data_transform" --decode_threads=1 \
    --batch_size="$data_batch" --seconds=5
  status=$?
  say "$(sed -n 's/^RESULT images_per_s=/- /p' "$log_dir/data_core")$([ "$status" -ne 0 ] && failure "$status" "$log_dir/data_core")"
  say ""
  say "Training from it (TF32, decode threads by default; compare the TF32 DummyData row above):"
  run_step "$step_timeout" "$log_dir/data_train" "$bin/bench/data_throughput" \
    --train_net=models/resnet50/train_val.prototxt --source="$log_dir/jpeg_lmdb" \
    --transform="$data_transform" --batch_size="$data_batch" --steps="$data_steps" $gpu_flag
  status=$?
  say '```'
  grep -E '^  ' "$log_dir/data_train" | sed 's/^  //' >>"$report"
  say '```'
  [ "$status" -ne 0 ] && say "data_throughput --train_net: $(failure "$status" "$log_dir/data_train")"
else
  say "data_throughput --make_source: $(failure $? "$log_dir/data_make")"
fi

# ---- 6. several GPUs: replica tests and 1 vs N scaling ----
progress "6/6 multi-GPU"
say ""
say "## Several GPUs"
say ""
if [ "$gpus" -lt 2 ]; then
  say "Needs 2 or more GPUs; this machine has $gpus."
else
  say "Replica tests (*TwoGpu*, *Nccl*, *MultiGpu*):"
  say ""
  run_tests '*TwoGpu*:*Nccl*:*MultiGpu*' replica_tests "$step_timeout"
  say ""
  say "| GPUs | CUDA graphs | batch per GPU | ms/iter | img/s |"
  say "|---|---|---|---|---|"
  solver="$log_dir/solver.prototxt"
  printf 'net: "%s"\nbase_lr: 0.01\nmomentum: 0.9\nlr_policy: "fixed"\nmax_iter: 30\ndisplay: 10\n' \
    "$root/models/resnet50/train_val.prototxt" >"$solver"
  for variant in 1:no "$gpus:no" "$gpus:yes"; do
    replicas=${variant%%:*}
    graphs=${variant##*:}
    ids=$(seq -s, 0 $((replicas - 1)))
    log="$log_dir/train_${replicas}_graphs_$graphs"
    run_step "$step_timeout" "$log" "$bin/tools/train" --solver="$solver" \
      --stage=dummy --gpu="$ids" "$([ "$graphs" = yes ] && echo --cuda_graph || echo --nocuda_graph)"
    status=$?
    ms=$(speed_ms "$log")
    if [ -n "$ms" ]; then
      say "| $replicas | $graphs | 32 | $ms | $(awk -v r="$replicas" -v ms="$ms" 'BEGIN { printf "%.1f", r * 32 * 1000 / ms }') |"
    else
      say "| $replicas | $graphs | 32 | $(failure "$status" "$log") | |"
    fi
  done
  grep -h "CUDA graph:" "$log_dir/train_${gpus}_graphs_yes" 2>/dev/null | strip_glog | sort -u |
    head -5 | sed 's/^/- /' >>"$report"
fi

say ""
say "Total: $((SECONDS - start)) s."
# On a lent device machine the step logs come back too: failures need more than one line.
if [ -n "${OUT:-}" ]; then tar -czf "$OUT/gpu_sh_logs.tar.gz" -C "$log_dir" . 2>/dev/null; fi
progress "done in $((SECONDS - start))s: $report"
