"""tools/extra/parse_log.py and plot_training_log.py on real training logs: one
written here by build/tools/train on the LeNet DummyData solver, and an excerpt
of a `make demo` log (tests/data/lenet_fashion_train_excerpt.log). The expected
numbers are read from the log lines with plain string operations, not with the
parser's regular expressions.

    python3 -m pytest -q tests/python/test_parse_log.py
"""

import csv
import datetime
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXTRA = os.path.join(ROOT, "tools", "extra")
sys.path.insert(0, EXTRA)
import parse_log  # noqa: E402

DEMO_EXCERPT = os.path.join(ROOT, "tests", "data", "lenet_fashion_train_excerpt.log")


def train_tool():
    """build/tools/train of DEMI_BUILD_DIR, else of build/ or build_cpu/."""
    dirs = [os.environ.get("DEMI_BUILD_DIR", ""), "build", "build_cpu"]
    for d in filter(None, dirs):
        path = os.path.join(ROOT, d, "tools", "train")
        if os.access(path, os.X_OK):
            return path
    pytest.fail("no build/tools/train (nor build_cpu/, nor $DEMI_BUILD_DIR/): run make all first")


@pytest.fixture(scope="module")
def trained_log(tmp_path_factory):
    """A log of 60 iterations of LeNet on DummyData: displays every 10, tests every 20."""
    folder = tmp_path_factory.mktemp("train")
    solver = folder / "solver.prototxt"
    solver.write_text(
        f'net: "{ROOT}/models/lenet/lenet_dummy.prototxt"\n'
        "type: \"SGD\" base_lr: 0.01 momentum: 0.9 weight_decay: 0.0005\n"
        "lr_policy: \"inv\" gamma: 0.0001 power: 0.75\n"
        "display: 10 average_loss: 5 max_iter: 60 test_iter: 2 test_interval: 20\n"
        f'snapshot: 0 snapshot_after_train: false snapshot_prefix: "{folder}/lenet"\n'
        "random_seed: 1701\n")
    log = folder / "train.log"
    with open(log, "w") as out:
        run = subprocess.run([train_tool(), f"--solver={solver}", "--logtostderr", "--threads=1"],
                             stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, timeout=600)
    assert run.returncode == 0, log.read_text()
    return str(log)


@pytest.fixture(params=["trained", "demo_excerpt"])
def real_log(request, trained_log):
    return trained_log if request.param == "trained" else DEMO_EXCERPT


def message(line):
    """The text after glog's "file:line] " prefix, or None for other lines."""
    if len(line) < 2 or line[0] not in "IWEF" or not line[1].isdigit() or "] " not in line:
        return None
    return line.split("] ", 1)[1].rstrip("\n")


def timestamp(line):
    """glog's time, with the year (I20261125 15:54:28.236311) or without it, as our
    tools and Caffe's write it (I1125 15:54:28.236311: a leap year's, so 0229 parses)."""
    date, time = line[1:].split()[:2]
    if len(date) == 4:
        date = "2000" + date
    return datetime.datetime.strptime(date + " " + time, "%Y%m%d %H:%M:%S.%f")


def expected_tables(path):
    """(train rows, test rows, rates) read from the log text."""
    train, test, rates = [], [], {}
    speed = {}
    start = None
    current = None
    with open(path) as log:
        for line in log:
            text = message(line)
            if text is None:
                continue
            if start is None and text.startswith("Solving "):
                start = timestamp(line)
            words = text.split()
            if text.startswith("Iteration ") and ", loss = " in text:
                current = {"NumIters": int(words[1].rstrip(",")), "time": timestamp(line)}
                train.append(current)
            elif text.startswith("Iteration ") and ", Testing net (#0)" in text:
                current = {"NumIters": int(words[1].rstrip(",")), "time": timestamp(line)}
                test.append(current)
            elif text.startswith("Iteration ") and ", lr = " in text:
                rates[int(words[1].rstrip(","))] = float(words[-1])
            elif "net output #" in text:
                name, value = text.split(": ", 1)[1].split(" = ")[:2]
                current[name] = float(value.split()[0])
            elif text.startswith("Speed: "):
                done = int(words[5].split("/")[0])
                speed[done] = (float(words[1]), float(words[3].lstrip("(")))
    train = [r for r in train if len(r) > 2]  # the closing line has no outputs
    for r in train + test:
        r["Seconds"] = (r.pop("time") - start).total_seconds()
        earlier = [i for i in rates if i <= r["NumIters"]]
        r["LearningRate"] = rates[max(earlier)] if earlier else rates[min(rates)]
    for r in train:
        if r["NumIters"] in speed:
            r["IterPerSecond"], r["MsPerIter"] = speed[r["NumIters"]]
    return train, test, rates


def read_csv(path):
    with open(path) as f:
        return [{k: float(v) for k, v in row.items() if v != ""} for row in csv.DictReader(f)]


def test_csv_equals_the_log_numbers(real_log, tmp_path):
    run = subprocess.run([sys.executable, os.path.join(EXTRA, "parse_log.py"), real_log,
                          str(tmp_path), "--verbose"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    name = os.path.basename(real_log)
    assert f"Wrote {tmp_path / name}.train" in run.stdout
    train, test, rates = expected_tables(real_log)
    assert len(train) >= 6 and len(test) >= 2 and rates, "the log is too short to test"
    with open(tmp_path / f"{name}.train") as f:
        header = next(csv.reader(f))
    assert header[:3] == ["NumIters", "Seconds", "LearningRate"]
    assert header[-2:] == ["IterPerSecond", "MsPerIter"]
    for expected, actual in ((train, read_csv(tmp_path / f"{name}.train")),
                             (test, read_csv(tmp_path / f"{name}.test"))):
        assert [r["NumIters"] for r in actual] == [r["NumIters"] for r in expected]
        for e, a in zip(expected, actual):
            assert a.keys() == e.keys(), (e, a)
            for key, value in e.items():
                assert a[key] == pytest.approx(value, rel=1e-12, abs=1e-9), (key, e, a)
    # Every display but the first has its Speed line.
    assert all("IterPerSecond" in r for r in train[1:])


def test_trained_log_has_every_display_and_test(trained_log):
    train, test = parse_log.parse_log(trained_log)
    assert [r["NumIters"] for r in train] == [0, 10, 20, 30, 40, 50]
    assert [r["NumIters"] for r in test] == [0, 20, 40, 60]
    assert all(set(r) >= {"accuracy", "loss"} for r in test)
    seconds = [r["Seconds"] for r in train]
    assert seconds == sorted(seconds) and seconds[0] >= 0


def without_year(line, shift):
    """`line` with its glog time moved by `shift` and written without the year."""
    if message(line) is None:
        return line
    moved = timestamp(line) + shift
    rest = line[1:].split(" ", 2)[2]
    return f"{line[0]}{moved:%m%d %H:%M:%S.%f} {rest}"


def test_year_less_times_across_midnight_and_new_year(trained_log, tmp_path):
    """Old glog writes no year: a run that starts on New Year's Eve a second
    before midnight must count its seconds as the dated log does."""
    with open(trained_log) as f:
        lines = f.readlines()
    solving = next(timestamp(l) for l in lines if (message(l) or "").startswith("Solving "))
    shift = datetime.datetime(2023, 12, 31, 23, 59, 59, 999000) - solving
    year_less = tmp_path / "year_less.log"
    year_less.write_text("".join(without_year(l, shift) for l in lines))
    # Written (last modified) in the new year, as such a log would be.
    modified = datetime.datetime(2024, 1, 1, 0, 5).timestamp()
    os.utime(year_less, (modified, modified))
    assert "I1231 23:59:59.999000" in year_less.read_text()
    assert any(l.startswith("I0101 00:00:") for l in year_less.read_text().splitlines())
    dated = parse_log.parse_log(trained_log)
    undated = parse_log.parse_log(str(year_less))
    for rows_dated, rows_undated in zip(dated, undated):
        assert len(rows_dated) == len(rows_undated)
        for d, u in zip(rows_dated, rows_undated):
            assert u["Seconds"] == pytest.approx(d["Seconds"], abs=1e-6)
            assert {k: v for k, v in u.items() if k != "Seconds"} == \
                {k: v for k, v in d.items() if k != "Seconds"}


def test_plot_writes_a_png(real_log, tmp_path):
    png = tmp_path / "curves.png"
    run = subprocess.run([sys.executable, os.path.join(EXTRA, "plot_training_log.py"), real_log,
                          str(png)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20000  # four charts with curves, not an empty canvas
    assert [p.name for p in tmp_path.iterdir()] == ["curves.png"]  # no temporary left


def test_bad_input_is_one_clear_line(tmp_path):
    script = os.path.join(EXTRA, "parse_log.py")
    missing = tmp_path / "missing.log"
    run = subprocess.run([sys.executable, script, str(missing), str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and str(missing) in run.stderr
    run = subprocess.run([sys.executable, script, DEMO_EXCERPT, str(tmp_path / "nowhere")],
                         capture_output=True, text=True)
    assert run.returncode == 1 and "nowhere does not exist" in run.stderr
    empty = tmp_path / "empty.log"
    empty.write_text("I20261125 10:00:00.000000 1 train.cpp:1] nothing to plot\n")
    run = subprocess.run([sys.executable, os.path.join(EXTRA, "plot_training_log.py"),
                          str(empty)], capture_output=True, text=True)
    assert run.returncode == 1 and "no 'Train net output'" in run.stderr
    assert not os.path.exists(f"{empty}.png")
    orphan = tmp_path / "orphan.log"
    orphan.write_text("I20261125 10:00:00.000000 1 solver.cpp:1]     "
                      "Test net output #0: accuracy = 0.5\n")
    with pytest.raises(parse_log.LogError, match=r"orphan.log:1: test output before"):
        parse_log.parse_log(str(orphan))


def test_plot_in_caffe_s_form(tmp_path):
    """plot_training_log.py CHART_TYPE OUT.png LOG...: Caffe's chart types, a
    line for each log, labelled by the log's name."""
    import plot_training_log
    assert plot_training_log.CHART_TYPES[0] == ("Test accuracy", "Iters")
    assert plot_training_log.CHART_TYPES[4] == ("Train learning rate", "Iters")
    assert plot_training_log.CHART_TYPES[6] == ("Train loss", "Iters")
    assert plot_training_log.CHART_TYPES[7] == ("Train loss", "Seconds")
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    with open(DEMO_EXCERPT) as f:
        text = f.read()
    for log in logs:
        log.write_text(text)
    png = tmp_path / "chart.png"
    script = os.path.join(EXTRA, "plot_training_log.py")
    run = subprocess.run([sys.executable, script, "6", str(png)] + [str(l) for l in logs],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chart.png", "first.log", "second.log"]
    # What the charts draw is the log's numbers.
    train, test, _ = expected_tables(DEMO_EXCERPT)
    lines = plot_training_log.chart_lines(6, [str(l) for l in logs])
    assert [label for label, _, _ in lines] == ["first", "second"]
    assert lines[0][1] == [r["NumIters"] for r in train]
    assert lines[0][2] == pytest.approx([r["loss"] for r in train])
    (label, seconds, accuracy), = plot_training_log.chart_lines(1, [DEMO_EXCERPT])
    assert label == "lenet_fashion_train_excerpt"
    assert seconds == pytest.approx([r["Seconds"] for r in test])
    assert accuracy == pytest.approx([r["accuracy"] for r in test])
    (_, _, rates), = plot_training_log.chart_lines(4, [DEMO_EXCERPT])
    assert rates == pytest.approx([r["LearningRate"] for r in train])
    # A chart number out of range lists the types; nothing is written.
    run = subprocess.run([sys.executable, script, "8", str(tmp_path / "no.png"), str(logs[0])],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "7: Train loss vs. Seconds" in run.stderr
    assert not (tmp_path / "no.png").exists()
