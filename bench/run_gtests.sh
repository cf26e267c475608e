#!/usr/bin/env bash
# Runs the tests of a GoogleTest binary that match FILTER, and goes on past a test that ends
# the process: on a GPU's first run of new code, a failed CUDA check aborts and a bad kernel
# may fault or hang, and one such test would otherwise hide every result after it. The test
# that was running is noted as crashed (or hung, when the time ran out), and the binary runs
# again on the tests not yet run, at most MAX_CRASHES (default 8) times.
#   bench/run_gtests.sh BINARY FILTER LOG [SECONDS]
# Every run's output is appended to LOG. SECONDS (default 600) bounds all runs together.
# Prints "P passed, S skipped, F failed, C crashed", then a line per failed or crashed test
# ("- failed: NAME", "- crashed: NAME (why)"), or "- not run: ..." when the binary died
# before any test or the time ran out. Exit status: 0 when every test ran and none failed.
set -uo pipefail

if [ $# -lt 3 ] || [ $# -gt 4 ]; then
  echo "usage: bench/run_gtests.sh BINARY FILTER LOG [SECONDS]" >&2
  exit 2
fi
binary=$1 filter=$2 log=$3 seconds=${4:-600}
max_crashes=${MAX_CRASHES:-8}
: >"$log"

part=$(mktemp)
trap 'rm -f "$part"' EXIT
passed=0 skipped=0 failed=0
failures="" crashes="" not_run="" excluded=""
crash_count=0
deadline=$((SECONDS + seconds))

# The test names of PART's per-test result lines with TAG ("OK", "SKIPPED", "FAILED"): the
# lines that end in a duration; the summary's repeated FAILED lines do not.
results_tagged() {
  sed -n "s/^\[ *$1 *\] \([^ ,]*\).* ms)\$/\1/p" "$part"
}

while :; do
  left=$((deadline - SECONDS))
  if [ "$left" -le 0 ]; then
    not_run="the ${seconds}s were spent before the remaining tests ran"
    break
  fi
  run_filter=$filter
  if [ -n "$excluded" ]; then
    case $filter in *-*) run_filter="$filter:$excluded" ;; *) run_filter="$filter-$excluded" ;; esac
  fi
  timeout --kill-after=10 "$left" "$binary" --gtest_filter="$run_filter" >"$part" 2>&1
  status=$?
  cat "$part" >>"$log"

  ok=$(results_tagged OK)
  skip=$(results_tagged SKIPPED)
  bad=$(results_tagged FAILED)
  passed=$((passed + $(printf '%s' "$ok" | grep -c .)))
  skipped=$((skipped + $(printf '%s' "$skip" | grep -c .)))
  failed=$((failed + $(printf '%s' "$bad" | grep -c .)))
  for name in $bad; do failures+="- failed: $name"$'\n'; done
  # GoogleTest's closing count: every selected test ran, whatever the exit status.
  grep -qE '^\[==========\] [0-9]+ tests? from .* ran\.' "$part" && break

  # The process ended inside a test: the last one started with no result line.
  last=$(sed -n 's/^\[ RUN      \] \([^ ]*\)$/\1/p' "$part" | tail -1)
  if [ -z "$last" ] || printf '%s\n' $ok $skip $bad | grep -qxF "$last"; then
    why=$(grep -E '^[EF][0-9]{4,8} |Check failed|[Ee]rror' "$part" | tail -1 | cut -c1-200)
    not_run="the binary ended outside a test (exit status $status)${why:+: $why}"
    break
  fi
  case $status in
    124 | 137) why="hung: killed when the time ran out" ;;
    *) why=$(grep -E '^[EF][0-9]{4,8} |Check failed|[Ee]rror|Segmentation|Abort' "$part" | tail -1 |
      sed 's/^[EF][0-9]\{4,8\} [0-9:.]* *[0-9]* [^]]*\] //' | cut -c1-200)
      why="exit status $status${why:+: $why}" ;;
  esac
  crashes+="- crashed: $last ($why)"$'\n'
  crash_count=$((crash_count + 1))
  # Leave out what already has a result, and the test that ended the process.
  for name in $ok $skip $bad "$last"; do excluded+="${excluded:+:}$name"; done
  if [ "$crash_count" -ge "$max_crashes" ]; then
    not_run="the rest: $crash_count tests ended the process, the most this script goes on after"
    break
  fi
done

echo "$passed passed, $skipped skipped, $failed failed, $crash_count crashed"
printf '%s' "$failures$crashes"
[ -n "$not_run" ] && echo "- not run: $not_run"
[ "$failed" -eq 0 ] && [ "$crash_count" -eq 0 ] && [ -z "$not_run" ]
