#!/usr/bin/env python3
"""Training-step speed of the zoo nets, side by side in one run (bench/speed.sh runs this).

For each net and thread count (pinned with taskset to cores 0, or 0-1): Demitasse's DNNL engine
(the default), its CAFFE engine with OpenBLAS GEMMs (BVLC Caffe's speed: `--engine=CAFFE`,
DEMI_GEMM=openblas) and PyTorch on the same prototxt (bench/torch_runner.py). Each is one
process: build the net, one warm-up step, then N timed forward+backward steps; min and mean ms,
and the process's peak RSS. Efficiency = training GFLOP (3 x forward multiply-adds x 2 of the
convolution and inner-product layers) / min time / the best SGEMM rate measured in the same run
at the same thread count (build/bench/sgemm_peak). Then LeNet on Fashion-MNIST: `train` on the
real data, 1 thread, ms per iteration from its Speed lines.

Usage: bench/speed.py [--quick] [--build build] [--out bench/results/speed.md] [--torch-bf16 auto]
"""
import argparse
import ctypes
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETS = [  # label, model dir, batch
    ("AlexNet", "alexnet", 32),
    ("GoogLeNet", "googlenet", 16),
    ("ResNet-50", "resnet50", 16),
    ("VGG-16", "vgg16", 8),
    ("MobileNet v1", "mobilenet_v1", 16),
    ("SqueezeNet 1.1", "squeezenet1.1", 32),
]
QUICK_NETS = [("ResNet-50", "resnet50", 4), ("SqueezeNet 1.1", "squeezenet1.1", 4)]


def run(command, env=None):
    """Runs `command`; returns its output and peak RSS in MiB (wait4 of that child alone)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env=env, cwd=ROOT, text=True)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"speed: {' '.join(command)} failed:\n{output[-3000:]}")
    return output, usage.ru_maxrss / 1024


def fix_openblas_kernels():
    """OpenBLAS picks kernels by CPU model and falls back to its SSE3 'Prescott' ones on a model
    it does not know (Debian 12's 0.3.21 on an Emerald Rapids VM: 5-10x slower). Comparing
    against that would flatter every other column, so the run sets OPENBLAS_CORETYPE for every
    process it starts (OpenBLAS reads it when it loads). Returns the header's sentence on it."""
    if "OPENBLAS_CORETYPE" in os.environ:
        return f"OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} (given)."
    try:
        openblas = ctypes.CDLL("libopenblas.so.0")
    except OSError:
        return ""
    openblas.openblas_get_corename.restype = ctypes.c_char_p
    core = openblas.openblas_get_corename().decode()
    flags = open("/proc/cpuinfo").read()
    if core != "Prescott" or " avx2" not in flags:
        return f"OpenBLAS kernels: {core}."
    os.environ["OPENBLAS_CORETYPE"] = "SkylakeX" if " avx512f" in flags else "Haswell"
    return (f"OpenBLAS detected '{core}' (it does not know this CPU model), so this run sets "
            f"OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} for every process.")


def pinned(threads):
    return ["taskset", "-c", "0" if threads == 1 else f"0-{threads - 1}"]


def demitasse(build, model, batch, threads, iterations, engine, precision=""):
    """engine: DNNL, CAFFE (with OpenBLAS GEMMs), or BEFORE: `build` is a build of an earlier
    commit, whose tools take neither --threads nor --engine (its threads come from the
    environment)."""
    env = dict(os.environ)
    command = pinned(threads) + [
        f"{build}/tools/time", f"--model={model}", "--stage=dummy", f"--batch={batch}",
        f"--iterations={iterations}"]
    if engine == "BEFORE":
        env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = str(threads)
    else:
        command.append(f"--threads={threads}")
    if engine == "CAFFE":
        command.append("--engine=CAFFE")
        env["DEMI_GEMM"] = "openblas"
    if precision:
        command.append(f"--precision={precision}")
    output, rss = run(command, env)
    steps = [float(x) for x in re.findall(r"forward-backward time: ([0-9.]+) ms", output)]
    return min(steps), sum(steps) / len(steps), rss


def pytorch(model, batch, threads, iterations, autocast=""):
    command = pinned(threads) + [
        "/usr/bin/python3", "bench/torch_runner.py", model, "--stage", "dummy", "--batch",
        str(batch), "--threads", str(threads), "--iters", str(iterations), "--warmup", "1"]
    if autocast:
        command += ["--autocast", autocast]
    output, rss = run(command)
    fields = dict(re.findall(r"(\w+)=([0-9.]+)", output.splitlines()[-1]))
    return float(fields["min_ms"]), float(fields["mean_ms"]), rss, float(fields["gflop"])


def has_avx512():
    """Whether /proc/cpuinfo lists AVX-512F: without it PyTorch's bfloat16 autocast on the CPU
    is emulated, 20-50x slower than its FLOAT (45-53 s an AlexNet or GoogLeNet step on a 2-core
    AVX2 EPYC), which alone would take most of an hour of a full run."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and "avx512f" in line.split() for line in f)
    except OSError:
        return False


def sgemm_peaks(build):
    output, _ = run([f"{build}/bench/sgemm_peak"])
    peaks = {}
    for library, threads, gflops in re.findall(r"library=(\w+) threads=(\d+) gflops=([0-9.]+)",
                                               output):
        peaks.setdefault(int(threads), {})[library] = float(gflops)
    return peaks


def lenet_fashion(build, iterations, before=False, precision=""):
    """ms/iteration of `train` on Fashion-MNIST with 1 compute thread (the data layer's
    prefetch thread runs beside it, as in Caffe), and the final test accuracy."""
    run(["bash", "data/fashion_mnist/get_fashion_mnist.sh"], dict(os.environ, BUILD_DIR=build))
    with open(os.path.join(ROOT, "models/lenet_fashion/solver.prototxt")) as f:
        solver = f.read()
    solver = re.sub(r"max_iter: \d+", f"max_iter: {iterations}", solver)
    solver = re.sub(r"test_interval: \d+", f"test_interval: {iterations}", solver)
    solver = re.sub(r"snapshot: \d+", "snapshot: 0", solver)
    with tempfile.NamedTemporaryFile("w", suffix=".prototxt", delete=False) as f:
        f.write(solver)
    try:
        env = dict(os.environ)
        command = [f"{build}/tools/train", f"--solver={f.name}"]
        if before:
            env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = "1"
        else:
            command.append("--threads=1")
        if precision:
            command.append(f"--precision={precision}")
        output, rss = run(command, env)
    finally:
        os.unlink(f.name)
    speeds = [float(x) for x in re.findall(r"\(([0-9.]+) ms/iter\)", output)]
    accuracy = re.findall(r"Test net output #0: accuracy = ([0-9.]+)", output)
    steady = sorted(speeds[1:] or speeds)
    return steady[len(steady) // 2], (accuracy[-1] if accuracy else "?"), rss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="small batches, 1 step: tests the script")
    parser.add_argument("--build", default="build")
    parser.add_argument("--before", default="",
                        help="a build of an earlier commit, timed beside (its CAFFE engine)")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench/results/speed.md"))
    parser.add_argument("--torch-bf16", choices=("auto", "yes", "no"), default="auto",
                        help="run PyTorch's bfloat16 autocast column (auto: where the CPU has "
                             "AVX-512)")
    args = parser.parse_args()
    torch_bf16 = args.torch_bf16 == "yes" or (args.torch_bf16 == "auto" and has_avx512())
    nets = QUICK_NETS if args.quick else NETS
    iterations = 1 if args.quick else 3
    started = time.time()
    openblas_note = fix_openblas_kernels()
    peaks = sgemm_peaks(args.build)
    lines = [
        "# Training-step speed (bench/speed.sh)", "",
        f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, forward+backward, "
        f"min and mean of {iterations} steps after a warm-up step; RSS = peak resident MiB "
        "of that process. Efficiency = training GFLOP / min time / best SGEMM GFLOP/s at the "
        "same threads (measured below in this run). DNNL: the default engine; CAFFE+OpenBLAS: "
        "`--engine=CAFFE` with DEMI_GEMM=openblas; before: the CAFFE engine of the build given "
        "by --before (the commit before this work: BVLC Caffe's speed); DNNL BF16: the default "
        "engine with `--precision=BFLOAT16` (convolutions in bfloat16 math, the blobs between "
        "16-bit layers stored in bfloat16; without AVX-512, stored only, the math FLOAT); PyTorch "
        "BF16: the forward under `torch.autocast('cpu', dtype=torch.bfloat16)`"
        + ("" if torch_bf16 else " (not run: this CPU has no AVX-512, where PyTorch emulates "
           "bfloat16 at 20-50x its FLOAT time; --torch-bf16=yes runs it)") + ". " + openblas_note,
        "",
        "SGEMM 2048^3 GFLOP/s: " + "; ".join(
            f"{t} thread(s): oneDNN {p['dnnl']:.0f}, OpenBLAS {p['openblas']:.0f}"
            for t, p in sorted(peaks.items())), "",
        "| net | batch | threads | GFLOP | DNNL min / mean ms | RSS | CAFFE+OpenBLAS min / mean ms"
        " | RSS | before min / mean ms | RSS | PyTorch min / mean ms | RSS | DNNL vs CAFFE | DNNL vs"
        " before | DNNL vs PyTorch | DNNL efficiency | DNNL BF16 min / mean ms | RSS | BF16 vs"
        " FLOAT | PyTorch BF16 min / mean ms | RSS | BF16 vs PyTorch BF16 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, directory, batch in nets:
        model = f"models/{directory}/train_val.prototxt"
        for threads in (1, 2):
            d_min, d_mean, d_rss = demitasse(args.build, model, batch, threads, iterations, "DNNL")
            c_min, c_mean, c_rss = demitasse(args.build, model, batch, threads, iterations, "CAFFE")
            b_min = b_mean = b_rss = float("nan")
            if args.before:
                b_min, b_mean, b_rss = demitasse(args.before, model, batch, threads, iterations,
                                                 "BEFORE")
            h_min, h_mean, h_rss = demitasse(args.build, model, batch, threads, iterations, "DNNL",
                                             "BFLOAT16")
            t_min, t_mean, t_rss, gflop = pytorch(model, batch, threads, iterations)
            a_min = a_mean = a_rss = float("nan")
            if torch_bf16:
                a_min, a_mean, a_rss, _ = pytorch(model, batch, threads, iterations, "bf16")
            peak = max(peaks[threads].values())
            efficiency = gflop / (d_min / 1000) / peak
            row = (f"| {label} | {batch} | {threads} | {gflop:.1f} | {d_min:.0f} / {d_mean:.0f} | "
                   f"{d_rss:.0f} | {c_min:.0f} / {c_mean:.0f} | {c_rss:.0f} | {b_min:.0f} / "
                   f"{b_mean:.0f} | {b_rss:.0f} | {t_min:.0f} / {t_mean:.0f} | {t_rss:.0f} | "
                   f"{c_min / d_min:.2f}x | {b_min / d_min:.2f}x | {t_min / d_min:.2f}x | "
                   f"{100 * efficiency:.0f}% | {h_min:.0f} / {h_mean:.0f} | {h_rss:.0f} | "
                   f"{d_min / h_min:.2f}x | {a_min:.0f} / {a_mean:.0f} | {a_rss:.0f} | "
                   f"{a_min / h_min:.2f}x |")
            lines.append(row)
            print(row, flush=True)
    lenet_iterations = 200 if args.quick else 2000
    ms, accuracy, rss = lenet_fashion(args.build, lenet_iterations)
    lines += ["", f"LeNet on Fashion-MNIST, `train` on the real data, 1 thread, {lenet_iterations} "
              f"iterations: {ms:.1f} ms/iteration (median of the Speed lines), test accuracy "
              f"{accuracy}, peak RSS {rss:.0f} MiB.", ""]
    # FLOAT16 is storage only on a CPU (FLOAT math): its accuracy, not its speed, is the point.
    for precision in ("BFLOAT16", "FLOAT16"):
        ms_16, accuracy_16, rss_16 = lenet_fashion(args.build, lenet_iterations,
                                                   precision=precision)
        lines += [f"The same with `--precision={precision}`: {ms_16:.1f} ms/iteration, test "
                  f"accuracy {accuracy_16}, peak RSS {rss_16:.0f} MiB.", ""]
    lines += [f"Run time: {time.time() - started:.0f} s."]
    if args.before:
        ms_before, accuracy_before, rss_before = lenet_fashion(args.before, lenet_iterations, True)
        lines.insert(-2, f"The same with the build before (`--before`): {ms_before:.1f} "
                     f"ms/iteration, test accuracy {accuracy_before}, peak RSS {rss_before:.0f} MiB.")
        lines.insert(-2, "")
    print("\n".join(lines[-5:]), flush=True)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"speed: wrote {args.out}")


if __name__ == "__main__":
    main()
