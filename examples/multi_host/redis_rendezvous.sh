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
source examples/multi_host/common.sh

if ! command -v redis-server > /dev/null; then
  echo "redis-server is missing: apt-get install redis-server" >&2
  exit 1
fi

work="$(mktemp -d)"
redis_pid=""
cleanup() {
  cleanup_ranks
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

write_solver "$work"
run_ranks "$work" "redis://127.0.0.1:$port"
