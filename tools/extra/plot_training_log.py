#!/usr/bin/python3
"""Plots a training log: train and test loss and test accuracy, against
iterations and against seconds, as one PNG of 2x2 charts.

    tools/extra/plot_training_log.py build/lenet_fashion_train.log [OUT.png]

OUT.png defaults to the log's path with .png appended. The log is read with
parse_log.py (beside this script); any test output whose name contains
"acc" is drawn as accuracy, any other output as a loss.
"""

import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parse_log import LogError, parse_log  # noqa: E402


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


def main(argv=None):
    parser = argparse.ArgumentParser(description="Plot loss and accuracy of a training log.")
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
