#!/usr/bin/python3
"""Parses a training log of `train` (or BVLC Caffe) into CSV tables.

    tools/extra/parse_log.py build/lenet_fashion_train.log build/

writes build/lenet_fashion_train.log.train and build/lenet_fashion_train.log.test
with Caffe's columns: NumIters, Seconds, LearningRate, then one column per net
output (loss, accuracy, ...). Train rows also carry our `Speed:` line as
IterPerSecond and MsPerIter (empty where no Speed line was logged, e.g. at
iteration 0). With several test nets, test rows get a TestNet column.

Seconds count from the "Solving" line (else the first timestamped line), read
from glog's line prefixes: "I20261125 15:54:28.236311 ..." (glog 0.6 and
later) or the year-less "I1125 15:54:28.236311 ..." (older glog, BVLC
Caffe's logs), whose year is the log file's and rolls over at New Year.

As a module: parse_log(path) returns (train_rows, test_rows), lists of dicts.
"""

import argparse
import csv
import datetime
import os
import re
import sys

# glog's prefix: severity, [yyyy]mmdd, hh:mm:ss.micro, thread id, file:line]
GLOG_PREFIX = re.compile(
    r"^[IWEF](?P<year>\d{4})?(?P<month>\d\d)(?P<day>\d\d) "
    r"(?P<hour>\d\d):(?P<minute>\d\d):(?P<second>\d\d)\.(?P<micro>\d{6})")
NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf))"
ITERATION_LOSS = re.compile(r"\] Iteration (\d+)(?: \([^)]*\))?, loss = " + NUMBER)
ITERATION_LR = re.compile(r"\] Iteration (\d+), lr = " + NUMBER)
TESTING = re.compile(r"\] Iteration (\d+), Testing net \(#(\d+)\)")
TRAIN_OUTPUT = re.compile(r"Train net output #(\d+): (\S+) = " + NUMBER)
TEST_OUTPUT = re.compile(r"Test net output #(\d+): (\S+) = " + NUMBER)
SPEED = re.compile(r"\] Speed: " + NUMBER + r" iter/s \(" + NUMBER + r" ms/iter\), (\d+)/")


class LogError(Exception):
    """A log that cannot be parsed; the message names the file and line."""


class _Clock:
    """Turns glog prefixes into datetimes, supplying the year when absent."""

    def __init__(self, path):
        modified = datetime.datetime.fromtimestamp(os.path.getmtime(path))
        self.year = modified.year
        self.modified_month = modified.month
        self.last_month = None

    def read(self, match):
        month, day = int(match["month"]), int(match["day"])
        if match["year"]:
            year = int(match["year"])
        else:
            if self.last_month is None and month > self.modified_month:
                # The log began last year and was last written in this one.
                self.year -= 1
            elif self.last_month is not None and month < self.last_month:
                self.year += 1  # New Year's Eve passed during training
            self.last_month = month
            year = self.year
        return datetime.datetime(year, month, day, int(match["hour"]), int(match["minute"]),
                                 int(match["second"]), int(match["micro"]))


def parse_log(path):
    """Returns (train_rows, test_rows): one dict per display and per test."""
    clock = _Clock(path)
    start = None
    first_time = None
    train_rows, test_rows = [], []
    rates = {}  # iteration -> the learning rate logged for it
    row = None  # the row that output lines are being added to
    test_nets = set()
    with open(path, errors="replace") as log:
        for number, line in enumerate(log, 1):
            prefix = GLOG_PREFIX.match(line)
            if not prefix:
                continue  # a continuation of a multi-line message
            try:
                time = clock.read(prefix)
            except ValueError as error:
                raise LogError(f"{path}:{number}: bad glog timestamp: {error}") from None
            if first_time is None:
                first_time = time
            if start is None and "] Solving " in line:
                start = time
            seconds = (time - (start or first_time)).total_seconds()
            if m := ITERATION_LOSS.search(line):
                row = {"NumIters": int(m[1]), "Seconds": seconds}
                train_rows.append(row)
            elif m := TESTING.search(line):
                row = {"NumIters": int(m[1]), "Seconds": seconds, "TestNet": int(m[2])}
                test_nets.add(int(m[2]))
                test_rows.append(row)
            elif m := ITERATION_LR.search(line):
                rates[int(m[1])] = float(m[2])
            elif m := TRAIN_OUTPUT.search(line):
                if row is None or "TestNet" in row:
                    raise LogError(f"{path}:{number}: train output before any 'Iteration N, loss'")
                row[m[2]] = float(m[3])
            elif m := TEST_OUTPUT.search(line):
                if row is None or "TestNet" not in row:
                    raise LogError(f"{path}:{number}: test output before any 'Testing net'")
                row[m[2]] = float(m[3])
            elif m := SPEED.search(line):
                if train_rows and train_rows[-1]["NumIters"] == int(m[3]):
                    train_rows[-1]["IterPerSecond"] = float(m[1])
                    train_rows[-1]["MsPerIter"] = float(m[2])
    # The closing "Iteration N, loss" of a run has no outputs: no row, as in Caffe.
    train_rows = [r for r in train_rows if len(r) > 2]
    for rows in (train_rows, test_rows):
        _fill_learning_rates(rows, rates)
        if rows is test_rows and len(test_nets) <= 1:
            for r in rows:
                del r["TestNet"]
    return [_ordered(r) for r in train_rows], [_ordered(r) for r in test_rows]


def _fill_learning_rates(rows, rates):
    """The rate logged for a row's iteration, else the latest before it, else
    the first one logged (a test at iteration 0 runs before any rate line)."""
    logged = sorted(rates)
    for r in rows:
        earlier = [i for i in logged if i <= r["NumIters"]]
        if earlier:
            r["LearningRate"] = rates[earlier[-1]]
        elif logged:
            r["LearningRate"] = rates[logged[0]]
        else:
            r["LearningRate"] = float("nan")


def _ordered(row):
    """Caffe's column order first, then outputs in log order, then ours."""
    first = ["NumIters", "Seconds", "LearningRate"]
    last = ["TestNet", "IterPerSecond", "MsPerIter"]
    ordered = {k: row[k] for k in first}
    ordered.update({k: v for k, v in row.items() if k not in first and k not in last})
    ordered.update({k: row[k] for k in last if k in row})
    return ordered


def _columns(rows):
    """Every column any row has, in the order rows first show them."""
    columns = {}
    for r in rows:
        columns.update(dict.fromkeys(r))
    first = ["NumIters", "Seconds", "LearningRate"]
    speed = [k for k in ("IterPerSecond", "MsPerIter") if k in columns]
    return first + [k for k in columns if k not in first and k not in speed] + speed


def write_csv(path, rows, delimiter=","):
    """Writes `rows` atomically (a temporary renamed into place)."""
    temporary = f"{path}.tmp.{os.getpid()}"
    with open(temporary, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=_columns(rows), delimiter=delimiter,
                                restval="", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    os.replace(temporary, path)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Parse a training log into LOGFILE.train and LOGFILE.test CSV files.")
    parser.add_argument("logfile_path", help="the log written by train (or Caffe)")
    parser.add_argument("output_dir", help="where LOGFILE.train and LOGFILE.test go")
    parser.add_argument("--delimiter", default=",", help="column separator (default ',')")
    parser.add_argument("--verbose", action="store_true", help="name the files written")
    args = parser.parse_args(argv)
    if len(args.delimiter) != 1:
        parser.error(f"--delimiter must be one character, not {args.delimiter!r}")
    if not os.path.isdir(args.output_dir):
        print(f"parse_log: output directory {args.output_dir} does not exist", file=sys.stderr)
        return 1
    try:
        train_rows, test_rows = parse_log(args.logfile_path)
    except (OSError, LogError) as error:
        print(f"parse_log: {error}", file=sys.stderr)
        return 1
    name = os.path.basename(args.logfile_path)
    for suffix, rows in (("train", train_rows), ("test", test_rows)):
        path = os.path.join(args.output_dir, f"{name}.{suffix}")
        write_csv(path, rows, args.delimiter)
        if args.verbose:
            print(f"Wrote {path} ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
