#!/usr/bin/python3
"""Plots a training log: train and test loss and test accuracy, against
iterations and against seconds, as one PNG of 2x2 charts.

    tools/extra/plot_training_log.py build/lenet_fashion_train.log [OUT.png]

OUT.png defaults to the log's path with .png appended. The log is read with
parse_log.py (beside this script); any test output whose name contains
"acc" is drawn as accuracy, any other output as a loss.

BVLC Caffe's form draws one chart, one line per log (several runs compared):

    tools/extra/plot_training_log.py CHART_TYPE OUT.png first.log [second.log ...]

with Caffe's chart types (the numbers of its plot_training_log.py.example):
CHART_TYPES below, listed by --help. "Train loss" draws the train net's loss
outputs, "Test loss" the test outputs that are not accuracies, "Test
accuracy" those whose name contains "acc"; a log with several such outputs
gets a line for each.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parse_log import LogError, parse_log  # noqa: E402


def _pyplot():
    """matplotlib's pyplot, drawing to files only (no display needed);
    imported when a chart is drawn, so usage errors answer at once."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot
    return matplotlib.pyplot


def _series(rows, x_key, y_key):
    points = [(r[x_key], r[y_key]) for r in rows if r.get(y_key, "") != ""]
    return [p[0] for p in points], [p[1] for p in points]


def _outputs(rows):
    names = []
    for r in rows:
        names += [k for k in r if k not in names and k not in
                  ("NumIters", "Seconds", "LearningRate", "TestNet", "IterPerSecond", "MsPerIter")]
    return names


def plot(log_path, png_path):
    train, test = parse_log(log_path)
    if not train and not test:
        raise LogError(f"{log_path}: no 'Train net output' or 'Test net output' lines to plot")
    train_losses = _outputs(train)
    test_outputs = _outputs(test)
    accuracies = [n for n in test_outputs if "acc" in n.lower()]
    test_losses = [n for n in test_outputs if n not in accuracies]

    plt = _pyplot()
    figure, axes = plt.subplots(2, 2, figsize=(12, 8), constrained_layout=True)
    figure.suptitle(f"{os.path.basename(log_path)}: {len(train)} train displays, "
                    f"{len(test)} tests", fontsize=13)
    for column, (x_key, x_label) in enumerate((("NumIters", "iterations"),
                                                ("Seconds", "seconds since Solving"))):
        loss_axis, accuracy_axis = axes[0][column], axes[1][column]
        for name in train_losses:
            loss_axis.plot(*_series(train, x_key, name), label=f"train {name}", color="tab:blue",
                           linewidth=1.2, alpha=0.8)
        for name in test_losses:
            loss_axis.plot(*_series(test, x_key, name), "o-", label=f"test {name}",
                           color="tab:orange", linewidth=1.8, markersize=4)
        loss_axis.set_title(f"loss against {x_label}")
        loss_axis.set_ylabel("loss")
        for name in accuracies:
            xs, ys = _series(test, x_key, name)
            accuracy_axis.plot(xs, ys, "o-", label=f"test {name}", color="tab:green",
                               linewidth=1.8, markersize=4)
            if ys:
                accuracy_axis.annotate(f"final {ys[-1]:.4f}", (xs[-1], ys[-1]), xytext=(-8, -16),
                                       textcoords="offset points", ha="right", fontsize=10)
        accuracy_axis.set_title(f"test accuracy against {x_label}")
        accuracy_axis.set_ylabel("accuracy")
        if not accuracies:
            accuracy_axis.text(0.5, 0.5, "no accuracy in the log", ha="center", va="center",
                               transform=accuracy_axis.transAxes, color="gray")
        for axis in (loss_axis, accuracy_axis):
            axis.set_xlabel(x_label)
            axis.grid(True, alpha=0.3)
            if axis.get_legend_handles_labels()[0]:
                axis.legend(loc="best", fontsize=10)
    temporary = f"{png_path}.tmp.{os.getpid()}.png"
    figure.savefig(temporary, dpi=100)
    plt.close(figure)
    os.replace(temporary, png_path)


# Caffe's chart types: (y, x) by number. Its example script numbers every
# y field against each x field, both in sorted order.
CHART_TYPES = [(y, x) for y in ("Test accuracy", "Test loss", "Train learning rate", "Train loss")
               for x in ("Iters", "Seconds")]
X_KEYS = {"Iters": "NumIters", "Seconds": "Seconds"}


def chart_type_list():
    return "\n".join(f"  {number}: {y} vs. {x}" for number, (y, x) in enumerate(CHART_TYPES))


def _chart_columns(y_field, train, test):
    """(rows, [column, ...]) that chart field `y_field` draws from a log."""
    if y_field == "Train learning rate":
        return train, ["LearningRate"]
    if y_field == "Train loss":
        outputs = _outputs(train)
        return train, [n for n in outputs if "loss" in n.lower()] or outputs
    outputs = _outputs(test)
    accuracies = [n for n in outputs if "acc" in n.lower()]
    return test, accuracies if y_field == "Test accuracy" else \
        [n for n in outputs if n not in accuracies]


def chart_lines(chart_type, log_paths):
    """The lines of Caffe's chart `chart_type` (CHART_TYPES): (label, xs, ys)
    for each log and output, labelled by the log's name less ".log" (and the
    output's name where a log has several)."""
    y_field, x_field = CHART_TYPES[chart_type]
    lines = []
    for log_path in log_paths:
        train, test = parse_log(log_path)
        rows, columns = _chart_columns(y_field, train, test)
        label = os.path.basename(log_path)
        if label.endswith(".log"):
            label = label[:-len(".log")]
        for column in columns:
            xs, ys = _series(rows, X_KEYS[x_field], column)
            if xs:
                lines.append((label if len(columns) == 1 else f"{label}: {column}", xs, ys))
    if not lines:
        raise LogError(f"{', '.join(log_paths)}: nothing to draw as '{y_field}'")
    return lines


def plot_chart(chart_type, png_path, log_paths):
    """Caffe's chart `chart_type` of every log in `log_paths`, as a PNG."""
    y_field, x_field = CHART_TYPES[chart_type]
    lines = chart_lines(chart_type, log_paths)
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(8, 6), constrained_layout=True)
    for label, xs, ys in lines:
        axis.plot(xs, ys, "o-" if len(xs) <= 50 else "-", linewidth=1.2, markersize=3,
                  label=label)
    axis.set_title(f"{y_field} vs. {x_field}")
    axis.set_xlabel(x_field)
    axis.set_ylabel(y_field)
    axis.grid(True, alpha=0.3)
    axis.legend(loc="lower right" if "accuracy" in y_field else "upper right")
    temporary = f"{png_path}.tmp.{os.getpid()}.png"
    figure.savefig(temporary, dpi=100)
    plt.close(figure)
    os.replace(temporary, png_path)


def caffe_main(argv):
    """Caffe's form: CHART_TYPE OUT.png LOG [LOG ...]."""
    parser = argparse.ArgumentParser(
        prog="plot_training_log.py",
        description="Plot one chart of one or more training logs (BVLC Caffe's form).",
        epilog="chart types:\n" + chart_type_list(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("chart_type", type=int, help="the chart's number (below)")
    parser.add_argument("png", help="where to write the chart")
    parser.add_argument("logs", nargs="+", help="logs written by train (or Caffe)")
    args = parser.parse_args(argv)
    if not 0 <= args.chart_type < len(CHART_TYPES):
        parser.error(f"chart type {args.chart_type} is not one of 0 to {len(CHART_TYPES) - 1}:\n"
                     + chart_type_list())
    try:
        plot_chart(args.chart_type, args.png, args.logs)
    except (OSError, LogError) as error:
        print(f"plot_training_log: {error}", file=sys.stderr)
        return 1
    print(args.png)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    # A chart number first (that is not a file) selects Caffe's form.
    if argv and argv[0].isdigit() and not os.path.exists(argv[0]):
        return caffe_main(argv)
    parser = argparse.ArgumentParser(
        description="Plot loss and accuracy of a training log.",
        epilog="Caffe's form: plot_training_log.py CHART_TYPE OUT.png LOG [LOG ...], "
               "chart types:\n" + chart_type_list(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", help="the log written by train (or Caffe)")
    parser.add_argument("png", nargs="?", help="where to write the chart (default: LOG.png)")
    args = parser.parse_args(argv)
    png = args.png or args.log + ".png"
    try:
        plot(args.log, png)
    except (OSError, LogError) as error:
        print(f"plot_training_log: {error}", file=sys.stderr)
        return 1
    print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
