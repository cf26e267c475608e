"""bench/run_gtests.sh, gpu.sh's test runner, against a stand-in for a GoogleTest binary
whose tests pass, fail, skip, abort or hang as their names say, so that going on past a
crash is checked without a GPU.

    python3 -m pytest -q tests/python/test_run_gtests.py
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "run_gtests.sh")

# Prints what a GoogleTest binary prints for the tests (argv[1], comma-separated) that
# --gtest_filter selects. A test's last name part says what it does.
STAND_IN = r'''
import fnmatch, os, signal, sys, time
tests = sys.argv[1].split(",")
flag = [a for a in sys.argv if a.startswith("--gtest_filter=")][0]
positive, _, negative = flag[len("--gtest_filter="):].partition("-")
def matches(name, patterns):
    return any(fnmatch.fnmatchcase(name, p) for p in patterns.split(":") if p)
selected = [t for t in tests if matches(t, positive) and not matches(t, negative)]
print("Note: Google Test filter = " + flag[len("--gtest_filter="):])
print("[==========] Running %d tests from 1 test suite." % len(selected), flush=True)
for name in selected:
    print("[ RUN      ] " + name, flush=True)
    kind = name.split(".")[1].rstrip("0123456789")
    if kind == "Aborts":
        print("F20261207 01:02:03.456789 4242 cuda.cpp:12] CUDA error: an illegal memory access",
              flush=True)
        os.kill(os.getpid(), signal.SIGABRT)
    if kind == "Hangs":
        time.sleep(60)
    tag = {"Passes": "       OK ", "Skips": "  SKIPPED ", "Fails": "  FAILED  "}[kind]
    print("[%s] %s (3 ms)" % (tag, name), flush=True)
print("[==========] %d tests from 1 test suite ran. (9 ms total)" % len(selected))
failed = [t for t in selected if ".Fails" in t]
for name in failed:
    print("[  FAILED  ] " + name)
sys.exit(1 if failed else 0)
'''


def run(tmp_path, tests, test_filter="*", seconds=60, max_crashes=None):
    stand_in = tmp_path / "stand_in.py"
    stand_in.write_text(STAND_IN)
    binary = tmp_path / "test_all"
    binary.write_text('#!/bin/sh\nexec %s %s %s "$@"\n' % (sys.executable, stand_in, ",".join(tests)))
    binary.chmod(0o755)
    log = tmp_path / "tests.log"
    env = dict(os.environ)
    if max_crashes is not None:
        env["MAX_CRASHES"] = str(max_crashes)
    result = subprocess.run(["bash", SCRIPT, str(binary), test_filter, str(log), str(seconds)],
                            capture_output=True, text=True, env=env, timeout=120)
    return result, log.read_text()


def test_every_test_passing_or_skipped_is_a_success(tmp_path):
    result, _ = run(tmp_path, ["A.Passes1", "A.Skips", "B.Passes2"])
    assert result.returncode == 0, result.stderr
    assert result.stdout == "2 passed, 1 skipped, 0 failed, 0 crashed\n"


def test_goes_on_after_a_test_that_aborts_and_runs_each_test_once(tmp_path):
    result, log = run(tmp_path, ["A.Passes1", "A.Aborts1", "A.Passes2", "B.Fails1", "B.Aborts2",
                                 "B.Skips"])
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "2 passed, 1 skipped, 1 failed, 2 crashed"
    assert "- failed: B.Fails1" in lines
    crashed = [line for line in lines if line.startswith("- crashed: ")]
    assert [line.split()[2] for line in crashed] == ["A.Aborts1", "B.Aborts2"]
    assert "illegal memory access" in crashed[0]
    for name in ["A.Passes1", "A.Aborts1", "A.Passes2", "B.Fails1", "B.Aborts2", "B.Skips"]:
        assert log.count("[ RUN      ] " + name + "\n") == 1, name


def test_keeps_the_filters_own_exclusions(tmp_path):
    result, log = run(tmp_path, ["A.Passes1", "A.Aborts1", "B.Fails1", "A.Passes2"], "A.*-A.Passes2")
    assert result.stdout.splitlines()[0] == "1 passed, 0 skipped, 0 failed, 1 crashed"
    assert "RUN      ] A.Passes2" not in log and "B.Fails1" not in log
    assert "Note: Google Test filter = A.*-A.Passes2:A.Passes1:A.Aborts1\n" in log


def test_a_hung_test_is_named_and_the_rest_reported_not_run(tmp_path):
    result, _ = run(tmp_path, ["A.Passes1", "A.Hangs", "A.Passes2"], seconds=3)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "1 passed, 0 skipped, 0 failed, 1 crashed"
    assert lines[1].startswith("- crashed: A.Hangs (hung")
    assert lines[2].startswith("- not run: the 3s were spent")


def test_stops_after_max_crashes(tmp_path):
    result, log = run(tmp_path, ["A.Aborts1", "A.Aborts2", "A.Passes1"], max_crashes=2)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "0 passed, 0 skipped, 0 failed, 2 crashed"
    assert lines[-1].startswith("- not run: the rest: 2 tests ended the process")
    assert "A.Passes1" not in log


def test_a_binary_that_dies_before_any_test_is_not_a_crash_loop(tmp_path):
    binary = tmp_path / "test_all"
    binary.write_text("#!/bin/sh\necho 'error while loading shared libraries: libcudnn.so.9' >&2\n"
                      "exit 127\n")
    binary.chmod(0o755)
    log = tmp_path / "tests.log"
    result = subprocess.run(["bash", SCRIPT, str(binary), "*Gpu*", str(log), "30"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "0 passed, 0 skipped, 0 failed, 0 crashed"
    assert lines[1].startswith("- not run: the binary ended outside a test (exit status 127)")
    assert "libcudnn.so.9" in lines[1]

