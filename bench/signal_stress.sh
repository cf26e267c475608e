#!/usr/bin/env bash
# Signals at random moments of a real training: N runs of LeNet (models/lenet_fashion)
# on a 10,000-record Fashion-MNIST LMDB, each sent SIGTERM or SIGINT after a random
# delay (startup, net construction, training, a test pass), then checked:
#   - the process exits 0 within the grace period (no hang, no abort, no crash), or,
#     for a signal that arrives before train installs its handler, dies of it
#     having written nothing;
#   - its log holds no sign of a crash (glibc's heap checks, glog's failure handler,
#     a CHECK, a sanitizer report);
#   - every snapshot it wrote is complete: the .solverstate names its .caffemodel,
#     both parse, and the model holds every learnable blob of the net.
#   bench/signal_stress.sh [N=200]          (from the repository root)
# Environment: BUILD_DIR (default build), STRESS_DIR (scratch, default a new
# temporary directory, removed when every run passed), MAX_DELAY (seconds,
# default 4), GRACE (seconds a signalled run may take to end, default 60).
# Exit status 0 when every run passed; the failed runs' logs are kept.
set -uo pipefail

runs="${1:-200}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${BUILD_DIR:-build}"
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
train="$build_dir/tools/train"
convert="$build_dir/tools/convert_mnist"
max_delay="${MAX_DELAY:-4}"
grace="${GRACE:-60}"
work="${STRESS_DIR:-$(mktemp -d /tmp/signal_stress.XXXXXX)}"
mkdir -p "$work"
mnist=/usr/share/datasets/fashion-mnist

for tool in "$train" "$convert"; do
  [ -x "$tool" ] || { echo "signal_stress: $tool is missing: build the tools" >&2; exit 2; }
done
[ -f "$mnist/t10k-images-idx3-ubyte.gz" ] || {
  echo "signal_stress: $mnist is missing: apt-get install dataset-fashion-mnist" >&2
  exit 2
}

# The test set serves as both phases' data: small, and real LMDB reads.
db="$work/fashion_lmdb"
if [ ! -f "$db/data.mdb" ]; then
  "$convert" --logtostderr "$mnist/t10k-images-idx3-ubyte.gz" \
    "$mnist/t10k-labels-idx1-ubyte.gz" "$db" >"$work/convert.log" 2>&1 ||
    { cat "$work/convert.log" >&2; exit 2; }
fi
sed -e "s#data/fashion_mnist/fashion_mnist_t[a-z]*_lmdb#$db#" \
  "$root/models/lenet_fashion/train_val.prototxt" >"$work/net.prototxt"

# Tests every 100 iterations (10 batches), so that signals also land in tests.
write_solver() {  # write_solver <run dir>
  cat >"$1/solver.prototxt" <<EOF
net: "$work/net.prototxt"
test_iter: 10
test_interval: 100
base_lr: 0.01
momentum: 0.9
weight_decay: 0.0005
lr_policy: "inv"
gamma: 0.0001
power: 0.75
display: 20
max_iter: 100000000
snapshot: 0
snapshot_prefix: "$1/lenet"
random_seed: 1701
EOF
}

# Every snapshot under the given run directories, checked in one process.
check_snapshots() {
  PYTHONPATH="$root/python" /usr/bin/python3 - "$@" <<'EOF'
import glob, os, sys
from demitasse.proto import caffe_pb2
bad = 0
for run in sys.argv[1:]:
    states = sorted(glob.glob(os.path.join(run, "lenet_iter_*.solverstate")))
    models = sorted(glob.glob(os.path.join(run, "lenet_iter_*.caffemodel")))
    leftovers = [f for f in os.listdir(run) if ".tmp" in f]
    problems = []
    if len(states) != len(models):
        problems.append(f"{len(states)} solverstates but {len(models)} caffemodels")
    if leftovers:
        problems.append(f"temporaries left: {leftovers}")
    for path in states:
        state = caffe_pb2.SolverState()
        with open(path, "rb") as f:
            state.ParseFromString(f.read())
        iteration = int(path.rsplit("_iter_", 1)[1].split(".")[0])
        if state.iter != iteration:
            problems.append(f"{path}: iter {state.iter}")
        model_path = state.learned_net
        if not os.path.isabs(model_path):
            model_path = os.path.join(os.path.dirname(path), os.path.basename(model_path))
        net = caffe_pb2.NetParameter()
        with open(model_path, "rb") as f:
            net.ParseFromString(f.read())
        # LeNet: conv1, conv2, ip1, ip2, each weights and bias.
        blobs = [b for layer in net.layer for b in layer.blobs]
        counts = [len(b.data) for b in blobs]
        if len(blobs) != 8 or 0 in counts or len(state.history) != 8:
            problems.append(f"{model_path}: blobs {counts}, history {len(state.history)}")
    for problem in problems:
        print(f"snapshot check: {run}: {problem}")
    bad += bool(problems)
sys.exit(1 if bad else 0)
EOF
}

failures=0
declare -A by_outcome
for ((i = 1; i <= runs; i++)); do
  run="$work/run_$i"
  rm -rf "$run" && mkdir -p "$run"
  write_solver "$run"
  if ((RANDOM % 2)); then sig=TERM; else sig=INT; fi
  # Milliseconds, uniform over [0, MAX_DELAY] s.
  delay_ms=$((RANDOM * 32768 + RANDOM))
  delay_ms=$((delay_ms % (max_delay * 1000 + 1)))
  # A background job starts with SIGINT ignored (and so does everything a
  # shell started in the background): the trainer gets the default actions.
  env --default-signal=INT,TERM,HUP \
    "$train" --logtostderr --solver="$run/solver.prototxt" >"$run/log" 2>&1 &
  pid=$!
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  kill -s "$sig" "$pid" 2>/dev/null
  status=""
  for ((t = 0; t < grace * 10; t++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid"
      status=$?
      break
    fi
    sleep 0.1
  done
  problem=""
  early=0
  if [ -z "$status" ]; then
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    problem="still running ${grace} s after SIG$sig"
  elif [ "$status" -ne 0 ]; then
    # Killed by the signal itself: acceptable only before train installs its
    # handler (the loader, static initialisers, flag parsing), so before it
    # builds the solver, and with nothing written.
    if [ "$status" -ne $((128 + $(kill -l "$sig"))) ] ||
      grep -q 'Initializing solver' "$run/log" ||
      [ -n "$(ls "$run" | grep -v -e '^log$' -e '^solver.prototxt$')" ]; then
      problem="exit status $status"
    else
      early=1
    fi
  fi
  if grep -qE 'corrupted|double free|free\(\)|malloc\(\)|Aborted|\*\*\* .* received|Check failed|ERROR: (Address|Thread|Leak)Sanitizer|WARNING: ThreadSanitizer|SUMMARY:' "$run/log"; then
    problem="${problem:+$problem; }crash report in the log"
  fi
  if [ -z "$problem" ] && ! check_snapshots "$run" >"$run/snapshots.txt"; then
    problem="bad snapshot: $(head -1 "$run/snapshots.txt")"
  fi
  iter="$(grep -oE 'Iteration [0-9]+' "$run/log" | tail -1)"
  if [ -n "$problem" ]; then
    failures=$((failures + 1))
    echo "run $i: SIG$sig after ${delay_ms} ms (${iter:-before training}): FAILED: $problem;" \
      "log: $run/log"
  else
    if ((early)); then
      outcome=before_main
    elif grep -q 'Optimization stopped early' "$run/log"; then
      outcome=stopped
    else
      outcome=other
    fi
    by_outcome[$outcome]=$((${by_outcome[$outcome]:-0} + 1))
    rm -rf "$run"
  fi
done
echo "signal_stress: $runs signalled trainings, $failures failed" \
  "(stopped early: ${by_outcome[stopped]:-0}; killed before the handler: ${by_outcome[before_main]:-0};" \
  "other clean ends: ${by_outcome[other]:-0})"
if [ "$failures" -eq 0 ] && [ -z "${STRESS_DIR:-}" ]; then rm -rf "$work"; fi
[ "$failures" -eq 0 ]
