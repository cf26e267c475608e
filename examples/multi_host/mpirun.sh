#!/usr/bin/env bash
# Two training processes started by Open MPI's mpirun on this machine: train
# reads its rank and the world size from mpirun's variables, and the ranks
# meet through a file store as in file_rendezvous.sh. Run from the repository
# root:
#   bash examples/multi_host/mpirun.sh
# On a cluster: mpirun -np N --hostfile hosts build/tools/train --solver=S \
#   --rendezvous=file:///nfs/dir (see README.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
source examples/multi_host/common.sh
command -v mpirun > /dev/null ||
  { echo "mpirun is missing: apt-get install openmpi-bin (scripts/install_deps.sh)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
write_solver "$work"
mkdir "$work/store"  # a fresh store
# --allow-run-as-root: Open MPI refuses root without it (containers);
# --oversubscribe: more ranks than this machine's cores are allowed.
status=0
mpirun --allow-run-as-root --oversubscribe -np "$world_size" \
  "$train" --logtostderr --solver="$work/solver.prototxt" --cpu_replicas="$cpu_replicas" \
  --rendezvous="file://$work/store" --rendezvous_host=127.0.0.1 --comm_timeout=60 \
  > "$work/mpirun.log" 2>&1 || status=$?
echo "mpirun exited with status $status"
[ "$status" -eq 0 ] || tail -n 30 "$work/mpirun.log"
grep -E '\] Rank [0-9]+ of' "$work/mpirun.log" | sed 's/^.*\] //' | sort
{ grep -E 'Iteration [0-9]+, loss' "$work/mpirun.log" | tail -n 1
  grep -E 'Replication:' "$work/mpirun.log"; } | sed 's/^.*\] //' || true
exit "$status"
