#!/usr/bin/env bash
# Two training processes on this machine, meeting through a Redis server, train
# LeNet on DummyData for 100 iterations as one data-parallel run. The script
# starts its own redis-server (Debian's redis-server package) on a free
# loopback port, without persistence, and stops it at exit. Run from the
# repository root:
#   bash examples/multi_host/redis_rendezvous.sh
# On real hosts every rank points at one shared Redis server; see README.md.
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
if ! command -v redis-server > /dev/null; then
  echo "redis-server is missing: apt-get install redis-server" >&2
  exit 1
fi

work="$(mktemp -d)"
pids=()
redis_pid=""
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid" 2> /dev/null || true
    wait "$redis_pid" 2> /dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# A loopback port nobody listens on, and a server that keeps nothing on disk.
port="$(python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')"
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
  > "$work/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 50); do
  redis-cli -p "$port" ping 2> /dev/null | grep -q PONG && break
  kill -0 "$redis_pid" 2> /dev/null || { cat "$work/redis.log" >&2; exit 1; }
  sleep 0.1
done
if ! redis-cli -p "$port" ping 2> /dev/null | grep -q PONG; then
  echo "redis-server did not answer on port $port" >&2
  exit 1
fi
echo "redis-server listening on 127.0.0.1:$port"

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

# A run id of its own: a Redis server outlives runs, and a rank refuses keys
# left by another run.
run_id="lenet_$(date +%s%N)"
for rank in $(seq 0 $((world_size - 1))); do
  "$train" --logtostderr --solver="$work/solver.prototxt" --cpu_replicas="$cpu_replicas" \
    --world_size="$world_size" --rank="$rank" --rendezvous="redis://127.0.0.1:$port" \
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
