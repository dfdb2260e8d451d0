#!/usr/bin/env python3
"""Throughput and memory of `kestrel stream`, and River on the same stream, in one run.

What it measures (issue 6, item 6), on synthetic LibSVM streams with d = 16 from
scripts/gen_stream.py (fixed seed; `cls`: ±1 labels for the SVM, `reg`: a real target
for SLKL):

1. Throughput: parse + predict + learn (prequential, test-then-train) in samples/s for
   each learner `kestrel stream` has (svm, slkl, and rsvm once `stream --learner rsvm`
   exists: the script probes it and says when it is skipped), on a 10^6-row file,
   median of 3 runs. The rate is the one
   `kestrel stream` prints (its own clock, from opening the input to the last row); the
   wall time of the whole process is shown beside it.
2. Memory: peak RSS (`/usr/bin/time -v`, "Maximum resident set size") of `kestrel stream`
   on the 10^6-row file, and while the generator pipes rows into it without a file:
   `python3 scripts/gen_stream.py --rows N | kestrel stream --input - ...`, N = 10^5,
   10^6, 10^7 for svm; SLKL is ~100x slower, so it streams 10^5, 10^6 and 3·10^6 (set
   with --slkl-pipe-rows, which rsvm uses too).
3. River (PyPI `river`): the nearest online equivalents, with
   `evaluate.progressive_val_score` over `stream.iter_libsvm` (so River parses the same
   file too), on the first 10^5 rows only (River is slow); `kestrel stream` runs on the
   same 10^5-row prefix in the same run, and the table gives the ratio of rates.
     svm  <-> linear_model.PAClassifier(C=1) and linear_model.LogisticRegression()
     slkl <-> feature_extraction.RBFSampler(gamma, 32) | linear_model.LinearRegression
              (SGD 0.0005: a larger step diverges on the 512 features), and a plain
              linear_model.LinearRegression() baseline.
   The River RBF sampler maps each feature separately (16 x 32 cosines); SLKL keeps 32
   multivariate centres in a 256-sample window. Neither is the other's algorithm.

Usage:
    pip install river            # numpy comes with it; gen_stream.py needs numpy
    python3 scripts/bench_stream.py [--runs 3] [--rows 1000000] [--pipe-rows 100000,1000000,10000000]
                                    [--slkl-pipe-rows 100000,1000000,3000000] [--river-rows 100000]
                                    [--skip-build] [--quick]
It builds kestrel in release (unless --skip-build), writes its data under
target/bench-stream/ (about 160 MB per 10^6 rows) and prints Markdown tables for
BENCHMARKS.md with the exact commands. --quick runs a small smoke version (10^4 rows).
Runs take ~25 minutes on 2 cores; keep the machine otherwise idle for stable numbers.
"""
import argparse
import itertools
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
GEN = os.path.join(ROOT, "scripts", "gen_stream.py")
WORK = os.path.join(ROOT, "target", "bench-stream")
TIME = "/usr/bin/time"
SEED = 6
DIM = 16
GAMMA = 0.03  # ≈ 1/(2d): ‖x − x'‖² ≈ 2d for N(0, I) rows, so k(x, x') ≈ e^-1
# Flags of each learner (the defaults of `kestrel stream`, written out; gamma set for d = 16).
LEARNERS = {
    "svm": ("cls", ["--window", "256", "--steps-per-sample", "5", "--c", "1", "--loss", "squared-hinge"]),
    "slkl": ("reg", ["--window", "256", "--centers", "32", "--steps-per-sample", "5",
                     "--gamma", str(GAMMA), "--nu", "0.01"]),
    "rsvm": ("cls", ["--window", "256", "--centers", "32", "--gamma", str(GAMMA)]),
}


def available(learner):
    """`kestrel stream --learner L` runs on a 100-row pipe (rsvm may not exist yet)."""
    task, _ = LEARNERS[learner]
    rows = subprocess.run(gen_cmd(task, 100), capture_output=True, check=True).stdout
    out = subprocess.run(stream_cmd(learner, "-"), input=rows, capture_output=True)
    if out.returncode != 0:
        print(f"[{learner}] skipped: {out.stderr.decode().strip()}", file=sys.stderr, flush=True)
    return out.returncode == 0


def rel(path):
    return os.path.relpath(path, ROOT)


def stream_cmd(learner, input_path):
    _, flags = LEARNERS[learner]
    return [KESTREL, "stream", "--learner", learner, "--input", input_path, "--dim", str(DIM),
            "--json", "--report-every", "0"] + flags


def show(cmd):
    """A command as a reader would type it, from the repository root."""
    return " ".join(shlex.quote(rel(c)) if c.startswith(ROOT) else shlex.quote(c) for c in cmd)


def gen_cmd(task, rows):
    return ["python3", GEN, "--task", task, "--rows", str(rows), "--seed", str(SEED)]


def fmt_rows(n):
    exponent = len(str(n)) - 1
    if n == 10 ** exponent:
        return f"10^{exponent}"
    return f"{n / 10 ** exponent:g}·10^{exponent}"


def parse_time_v(stderr):
    """Peak RSS (KiB), wall seconds and CPU seconds (user + system) from `time -v`."""
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr).group(1))
    cpu = sum(float(re.search(rf"{k} time \(seconds\): (\S+)", stderr).group(1)) for k in ("User", "System"))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", stderr).group(1)
    seconds = 0.0
    for part in wall.split(":"):
        seconds = seconds * 60 + float(part)
    return rss, seconds, cpu


def run_kestrel(cmd, stdin_cmd=None):
    """Runs `cmd` under /usr/bin/time -v (fed by `stdin_cmd` through a pipe when given);
    returns (summary JSON, peak RSS in KiB, wall seconds, CPU seconds of kestrel)."""
    timed = [TIME, "-v"] + cmd
    if stdin_cmd is None:
        out = subprocess.run(timed, capture_output=True, text=True)
    else:
        producer = subprocess.Popen(stdin_cmd, stdout=subprocess.PIPE)
        out = subprocess.run(timed, stdin=producer.stdout, capture_output=True, text=True)
        producer.stdout.close()
        if producer.wait() != 0:
            sys.exit(f"generator failed: {show(stdin_cmd)}")
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {show(cmd)}\n{out.stderr[-2000:]}")
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    rss, wall, cpu = parse_time_v(out.stderr)
    return summary, rss, wall, cpu


def ensure_file(task, rows):
    path = os.path.join(WORK, f"{task}_{rows}.svm")
    if not os.path.exists(path):
        with open(path + ".tmp", "wb") as f:
            subprocess.run(gen_cmd(task, rows), stdout=f, check=True)
        os.replace(path + ".tmp", path)
    return path


def metric_of(summary):
    if "accuracy" in summary:
        return f"accuracy {summary['accuracy']:.4f}"
    return f"MSE {summary['mse']:.4f}"


def median_run(cmd, runs):
    results = [run_kestrel(cmd) for _ in range(runs)]
    rate = statistics.median(r[0]["samples_per_sec"] for r in results)
    wall = statistics.median(r[2] for r in results)
    rss = max(r[1] for r in results)
    cpu_rate = statistics.median((r[0]["n"] + 1) / r[3] for r in results if r[3] > 0) if any(r[3] > 0 for r in results) else 0
    return rate, wall, rss, results[0][0], [r[0]["samples_per_sec"] for r in results], cpu_rate


# --- River -------------------------------------------------------------------------

def river_models():
    from river import feature_extraction, linear_model, metrics, optim
    binary = lambda s: float(s) > 0  # noqa: E731  River's binary classifiers want bools
    return [
        ("svm", "cls", "linear_model.PAClassifier(C=1.0, mode=1)",
         lambda: linear_model.PAClassifier(C=1.0, mode=1), metrics.Accuracy, binary),
        ("svm", "cls", "linear_model.LogisticRegression()",
         lambda: linear_model.LogisticRegression(), metrics.Accuracy, binary),
        ("slkl", "reg", f"feature_extraction.RBFSampler(gamma={GAMMA}, n_components=32, seed=1)"
         " | linear_model.LinearRegression(optimizer=optim.SGD(0.0005))",
         lambda: feature_extraction.RBFSampler(gamma=GAMMA, n_components=32, seed=1)
         | linear_model.LinearRegression(optimizer=optim.SGD(0.0005)), metrics.MSE, float),
        ("slkl", "reg", "linear_model.LinearRegression()",
         lambda: linear_model.LinearRegression(), metrics.MSE, float),
    ]


def run_river(path, rows, make_model, make_metric, target_type):
    from river import evaluate, stream
    start = time.perf_counter()
    metric = evaluate.progressive_val_score(
        itertools.islice(stream.iter_libsvm(path, target_type=target_type), rows), make_model(), make_metric())
    seconds = time.perf_counter() - start
    return rows / seconds, metric.get()


# --- main ----------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--pipe-rows", default="100000,1000000,10000000")
    parser.add_argument("--slkl-pipe-rows", default="100000,1000000,3000000")
    parser.add_argument("--river-rows", type=int, default=100_000)
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--quick", action="store_true", help="smoke test on 10^4 rows")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.river_rows, args.runs = 10_000, 2_000, 1
        args.pipe_rows, args.slkl_pipe_rows = "1000,10000", "1000,10000"
    pipe_rows = {"svm": [int(n) for n in args.pipe_rows.split(",")],
                 "slkl": [int(n) for n in args.slkl_pipe_rows.split(",")],
                 "rsvm": [int(n) for n in args.slkl_pipe_rows.split(",")]}

    if not args.skip_build:
        subprocess.run(["cargo", "build", "--release", "-p", "kestrel-stream"], cwd=ROOT, check=True)
    os.makedirs(WORK, exist_ok=True)
    learners = [learner for learner in LEARNERS if available(learner)]
    skipped = [learner for learner in LEARNERS if learner not in learners]
    files = {task: ensure_file(task, args.rows) for task in ("cls", "reg")}
    prefixes = {task: ensure_file(task, args.river_rows) for task in ("cls", "reg")}

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"Machine: {cpu}, {os.cpu_count()} cores (shared), load average at start "
          f"{os.getloadavg()[0]:.2f}; data: scripts/gen_stream.py --seed {SEED}, d = {DIM}.\n",
          flush=True)

    # 1. Throughput on the 10^6-row files.
    rows_txt = fmt_rows(args.rows)
    throughput = []
    for learner in learners:
        task, _ = LEARNERS[learner]
        cmd = stream_cmd(learner, files[task])
        rate, wall, rss, summary, rates, cpu_rate = median_run(cmd, args.runs)
        throughput.append((learner, cmd, rate, wall, rss, summary, rates, cpu_rate))
        print(f"[{learner}] {rate:,.0f} samples/s (runs: {', '.join(f'{r:,.0f}' for r in rates)})",
              file=sys.stderr, flush=True)

    # 2. Peak RSS while streaming through a pipe.
    memory = []
    for learner in learners:
        task, _ = LEARNERS[learner]
        for rows in pipe_rows[learner]:
            cmd = stream_cmd(learner, "-")
            summary, rss, wall, _ = run_kestrel(cmd, stdin_cmd=gen_cmd(task, rows))
            assert summary["n"] == rows, summary  # every row is scored, the first too
            memory.append((learner, rows, cmd, gen_cmd(task, rows), rss, wall, summary))
            print(f"[{learner} pipe {rows}] {rss} KiB in {wall:.1f} s", file=sys.stderr, flush=True)

    # 3. River against kestrel on the same prefix.
    comparison = []
    kestrel_prefix = {}
    for learner in learners:
        task, _ = LEARNERS[learner]
        cmd = stream_cmd(learner, prefixes[task])
        rate, _, _, summary, _, _ = median_run(cmd, args.runs)
        kestrel_prefix[learner] = (cmd, rate, summary)
    for learner, task, name, make_model, make_metric, target_type in river_models():
        if learner not in learners:
            continue
        results = [run_river(prefixes[task], args.river_rows, make_model, make_metric, target_type)
                   for _ in range(args.runs)]
        rate = statistics.median(r[0] for r in results)
        comparison.append((learner, task, name, rate, results[0][1]))
        print(f"[river {name}] {rate:,.0f} samples/s", file=sys.stderr, flush=True)

    # Tables.
    print(f"### `kestrel stream` throughput, {rows_txt} rows, d = {DIM} (median of {args.runs})\n")
    print("| learner | samples/s (parse + predict + learn) | runs | wall s | rows per CPU-second | prequential metric | peak RSS |")
    print("| --- | ---: | --- | ---: | ---: | --- | ---: |")
    for learner, cmd, rate, wall, rss, summary, rates, cpu_rate in throughput:
        runs = ", ".join(f"{r:,.0f}" for r in rates)
        print(f"| {learner} | {rate:,.0f} | {runs} | {wall:.2f} | {cpu_rate:,.0f} | {metric_of(summary)} | {rss / 1024:.1f} MiB |")
    print(f"\nLoad average at the end: {os.getloadavg()[0]:.2f}. Rows per CPU-second = rows / (user + system "
          "time of the kestrel process), less sensitive than samples/s to other work on the machine.")
    for learner in skipped:
        print(f"\n{learner}: `kestrel stream --learner {learner}` does not run in this build (not measured).")
    print()
    print("Commands:\n")
    print("```")
    for task in ("cls", "reg"):
        print(f"{show(gen_cmd(task, args.rows))} > {rel(files[task])}")
    for learner, cmd, *_ in throughput:
        print(f"/usr/bin/time -v {show(cmd)}")
    print("```\n")

    print("### Peak RSS while streaming from a pipe (no file on disk)\n")
    print("| learner | rows | peak RSS | wall s | samples/s (bounded by the generator for svm) | prequential metric |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for learner, rows, cmd, gen, rss, wall, summary in memory:
        print(f"| {learner} | {fmt_rows(rows)} | {rss / 1024:.1f} MiB | {wall:.1f} | "
              f"{summary['samples_per_sec']:,.0f} | {metric_of(summary)} |")
    print("\nCommands (N = the rows above):\n")
    print("```")
    for learner in learners:
        task, _ = LEARNERS[learner]
        print(f"python3 scripts/gen_stream.py --task {task} --rows N --seed {SEED} | "
              f"/usr/bin/time -v {show(stream_cmd(learner, '-'))}")
    print("```\n")

    river_txt = fmt_rows(args.river_rows)
    print(f"### Kestrel against River {river_version()}, first {river_txt} rows of the same stream "
          f"(median of {args.runs}, one run of this script)\n")
    print("| task | Kestrel | samples/s | River (progressive_val_score) | samples/s | Kestrel / River | metric Kestrel | metric River |")
    print("| --- | --- | ---: | --- | ---: | ---: | --- | --- |")
    for learner, task, name, rate, value in comparison:
        cmd, k_rate, k_summary = kestrel_prefix[learner]
        cell = name.replace("|", "\\|")  # a pipe inside a Markdown table cell
        river_metric = f"accuracy {value:.4f}" if task == "cls" else f"MSE {value:.4f}"
        print(f"| {'binary' if task == 'cls' else 'regression'} | `stream --learner {learner}` | {k_rate:,.0f} | "
              f"`{cell}` | {rate:,.0f} | {ratio(k_rate / rate)} | {metric_of(k_summary)} | {river_metric} |")
    print("\nCommands:\n")
    print("```")
    for learner, (cmd, _, _) in kestrel_prefix.items():
        print(show(cmd))
    print("# River, in this script (run_river): evaluate.progressive_val_score(")
    print(f"#     itertools.islice(stream.iter_libsvm(PATH, target_type=T), {args.river_rows}), MODEL, METRIC)")
    print("```")


def ratio(r):
    return f"{r:,.0f}x" if r >= 10 else f"{r:.2f}x"


def river_version():
    try:
        import river
        return river.__version__
    except ImportError:
        sys.exit("pip install river")


if __name__ == "__main__":
    main()
