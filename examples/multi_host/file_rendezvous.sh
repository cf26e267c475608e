#!/usr/bin/env bash
# Two training processes on this machine, meeting through a file store, train
# LeNet on DummyData for 100 iterations as one data-parallel run. Run from the
# repository root:
#   bash examples/multi_host/file_rendezvous.sh
# On real hosts the store is a directory every host mounts (NFS); see README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

cpu_replicas="${CPU_REPLICAS:-1}"  # replicas (threads) in each process
world_size=2
[ "$cpu_replicas" -ge 1 ] || { echo "CPU_REPLICAS must be at least 1" >&2; exit 1; }
# OpenBLAS's threads per process: the cores shared out among all replicas
# (more threads than cores makes concurrent GEMMs from replicas crawl).
blas_threads=$(($(nproc) / (world_size * cpu_replicas)))
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-$((blas_threads > 0 ? blas_threads : 1))}"
train=./build/tools/train
[ -x "$train" ] || { echo "$train is missing: run make first" >&2; exit 1; }

work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# The LeNet solver, shortened: 100 iterations, no snapshots, no testing.
grep -vE '^(max_iter|snapshot|snapshot_prefix|snapshot_after_train|test_interval|display):' \
  models/lenet/lenet_dummy_solver.prototxt > "$work/solver.prototxt"
cat >> "$work/solver.prototxt" << SOLVER
snapshot_prefix: "$work/lenet"
max_iter: 100
display: 20
snapshot: 0
snapshot_after_train: false
test_interval: 1000000
test_initialization: false
SOLVER

# A fresh store and a run id of its own: a rank refuses keys left by another run.
mkdir "$work/store"
run_id="lenet_$(date +%s%N)"
for rank in $(seq 0 $((world_size - 1))); do
  "$train" --logtostderr --solver="$work/solver.prototxt" --cpu_replicas="$cpu_replicas" \
    --world_size="$world_size" --rank="$rank" --rendezvous="file://$work/store" \
    --rendezvous_host=127.0.0.1 --run_id="$run_id" --comm_timeout=60 \
    > "$work/rank$rank.log" 2>&1 &
  pids+=("$!")
done

failed=0
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
exit "$failed"
