# Shared by file_rendezvous.sh and redis_rendezvous.sh (sourced, not run):
# the settings, the shortened LeNet solver, and launching and reporting the
# ranks. Expects the caller to be at the repository root with `set -euo
# pipefail`, and to call `cleanup_ranks` from its EXIT trap.

cpu_replicas="${CPU_REPLICAS:-1}"  # replicas (threads) in each process
world_size=2
[ "$cpu_replicas" -ge 1 ] || { echo "CPU_REPLICAS must be at least 1" >&2; exit 1; }
# OpenBLAS's threads per process: the cores shared out among all replicas of
# all processes on this machine (train only knows its own process's).
blas_threads=$(($(nproc) / (world_size * cpu_replicas)))
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-$((blas_threads > 0 ? blas_threads : 1))}"
train=./build/tools/train
[ -x "$train" ] || { echo "$train is missing: run make first" >&2; exit 1; }
pids=()

cleanup_ranks() {
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
}

# write_solver DIR: the LeNet solver, shortened to 100 iterations, no
# snapshots, no testing, as DIR/solver.prototxt.
write_solver() {
  grep -vE '^(max_iter|snapshot|snapshot_prefix|snapshot_after_train|test_interval|display):' \
    models/lenet/lenet_dummy_solver.prototxt > "$1/solver.prototxt"
  cat >> "$1/solver.prototxt" << SOLVER
snapshot_prefix: "$1/lenet"
max_iter: 100
display: 20
snapshot: 0
snapshot_after_train: false
test_interval: 1000000
test_initialization: false
SOLVER
}

# run_ranks DIR RENDEZVOUS: starts every rank on loopback with a run id of its
# own (a rank refuses keys left by another run), waits for them, prints each
# exit status (and a failed rank's last log lines) and rank 0's last loss and
# replication line. Returns non-zero if any rank failed.
run_ranks() {
  local work=$1 rendezvous=$2 run_id rank status failed=0
  run_id="lenet_$(date +%s%N)"
  for rank in $(seq 0 $((world_size - 1))); do
    "$train" --logtostderr --solver="$work/solver.prototxt" --cpu_replicas="$cpu_replicas" \
      --world_size="$world_size" --rank="$rank" --rendezvous="$rendezvous" \
      --rendezvous_host=127.0.0.1 --run_id="$run_id" --comm_timeout=60 \
      > "$work/rank$rank.log" 2>&1 &
    pids+=("$!")
  done
  for rank in "${!pids[@]}"; do
    status=0
    wait "${pids[$rank]}" || status=$?
    echo "rank $rank exited with status $status"
    if [ "$status" -ne 0 ]; then
      failed=1
      echo "--- last lines of rank $rank's log:"
      tail -n 15 "$work/rank$rank.log"
    fi
  done
  pids=()
  echo "--- rank 0:"
  { grep -E 'Iteration [0-9]+, loss' "$work/rank0.log" | tail -n 1
    grep -E 'Replication:' "$work/rank0.log"; } | sed 's/^.*\] //' || true
  return "$failed"
}
