#!/usr/bin/env bash
# Two training processes on this machine, meeting through a file store, train
# LeNet on DummyData for 100 iterations as one data-parallel run. Run from the
# repository root:
#   bash examples/multi_host/file_rendezvous.sh
# On real hosts the store is a directory every host mounts (NFS); see README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
source examples/multi_host/common.sh

work="$(mktemp -d)"
trap 'cleanup_ranks; rm -rf "$work"' EXIT
write_solver "$work"
mkdir "$work/store"  # a fresh store
run_ranks "$work" "file://$work/store"
