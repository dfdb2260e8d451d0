#!/usr/bin/env python3
"""`kestrel stream` between MQTT topics of a local Mosquitto: rows per second against the
same rows from a file, latency from publish to prediction, and CPU against the broker's.

What it measures, for the svm and slkl learners (the flags of scripts/bench_stream.py) on
the synthetic d = 16 LibSVM streams of scripts/gen_stream.py (fixed seed):

1. File: `kestrel stream --input FILE` on N rows: the rate kestrel prints.
2. Broker, queued: the N rows are first published (one message each, QoS 1, by the load
   generator of item 3, which waits for every acknowledgement) into kestrel's persistent
   session; then `kestrel stream --input
   mqtt://… --output mqtt://…` learns them all and publishes a prediction per row. Its
   rate (its own clock, from connecting to the last row), its CPU seconds (user + system,
   from wait4) and Mosquitto's over the same run (from /proc/PID/stat).
3. Broker, live: kestrel listens; `stream/examples/mqtt_load.rs` publishes rows at 1 000
   and 10 000 messages/s and as fast as the broker takes them (for 10 s, or N rows),
   and matches each prediction to its row: latency from publish to the prediction's
   arrival (p50, p99, max), and the CPU seconds of kestrel and Mosquitto over the run.

Usage:
    python3 scripts/bench_mqtt.py [--rows 200000] [--seconds 10] [--skip-build]
Needs mosquitto and mosquitto_sub (Debian `mosquitto`, `mosquitto-clients`) and numpy (for
gen_stream.py). Prints Markdown tables for BENCHMARKS.md. ~5 minutes on 2 cores; keep the
machine otherwise idle.
"""
import argparse
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
LOAD = os.path.join(ROOT, "target", "release", "examples", "mqtt_load")
GEN = os.path.join(ROOT, "scripts", "gen_stream.py")
WORK = os.path.join(ROOT, "target", "bench-mqtt")
MOSQUITTO = "/usr/sbin/mosquitto"
DIM = 16
GAMMA = 0.03
LEARNERS = {
    "svm": ("cls", ["--window", "256", "--steps-per-sample", "5", "--c", "1", "--loss", "squared-hinge"]),
    "slkl": ("reg", ["--window", "256", "--centers", "32", "--steps-per-sample", "5",
                     "--gamma", str(GAMMA), "--nu", "0.01"]),
}
TICKS = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """User + system CPU seconds of a running process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Broker:
    def __init__(self, directory):
        self.port = free_port()
        config = os.path.join(directory, "mosquitto.conf")
        with open(config, "w") as f:
            f.write(f"listener {self.port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\n")
        self.process = subprocess.Popen([MOSQUITTO, "-c", config], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port)).close()
                break
            except OSError:
                if time.time() > deadline:
                    sys.exit("mosquitto does not listen")
                time.sleep(0.02)

    def url(self, topic):
        return f"mqtt://127.0.0.1:{self.port}/{topic}"

    def session(self, client_id, topic):
        subprocess.run(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(self.port), "-c", "-i", client_id,
                        "-q", "1", "-t", topic, "-E"], check=True)

    def publish_file(self, topic, path, count):
        """Publishes the rows of `path`, one message each, until the broker has them all."""
        subprocess.run([LOAD, "127.0.0.1", str(self.port), topic, "-", path, str(count), "0"], check=True,
                       stdout=subprocess.DEVNULL)

    def cpu(self):
        return cpu_seconds(self.process.pid)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait()


def kestrel_flags(learner, source, more):
    return ([KESTREL, "stream", "--learner", learner, "--input", source, "--dim", str(DIM), "--seed", "1",
             "--report-every", "0", "--json"] + LEARNERS[learner][1] + more)


def start(command):
    """Starts `command`, its standard error to a file (read only if it fails)."""
    errors = tempfile.TemporaryFile()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors)
    process.errors = errors
    process.command = command
    return process


def finish(process):
    """Waits for `process`: (its last stdout line as JSON, its user + system CPU seconds)."""
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        process.errors.seek(0)
        sys.exit(f"{shlex.join(process.command)} failed: {process.errors.read().decode()}")
    return json.loads(out.decode().strip().splitlines()[-1]), usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--skip-build", action="store_true")
    args = parser.parse_args()
    if not args.skip_build:
        subprocess.run(["cargo", "build", "--release", "-p", "kestrel-stream", "--bin", "kestrel",
                        "--example", "mqtt_load"], cwd=ROOT, check=True)
    os.makedirs(WORK, exist_ok=True)
    data = {}
    for task in ("cls", "reg"):
        path = os.path.join(WORK, f"{task}-{args.rows}.svm")
        if not os.path.exists(path):
            with open(path, "wb") as f:
                subprocess.run([sys.executable, GEN, "--task", task, "--rows", str(args.rows)], stdout=f, check=True)
        data[task] = path

    throughput, latency = [], []
    with tempfile.TemporaryDirectory() as directory:
        broker = Broker(directory)
        try:
            for learner, (task, _) in LEARNERS.items():
                rows = data[task]
                command = kestrel_flags(learner, rows, [])
                summary, cpu = finish(start(command))
                throughput.append((learner, "file", summary["samples_per_sec"], cpu, None, shlex.join(command)))

                client = f"bench-{learner}"
                broker.session(client, "in")
                broker.publish_file("in", rows, args.rows)
                command = kestrel_flags(learner, broker.url("in"), [
                    "--client-id", client, "--max-rows", str(args.rows), "--output", broker.url("out")])
                before = broker.cpu()
                summary, cpu = finish(start(command))
                broker_cpu = broker.cpu() - before
                rate = summary["samples_per_sec"]
                throughput.append((learner, "broker (queued)", rate, cpu, broker_cpu, shlex.join(command)))

                for rate in (1000, 10000, 0):
                    count = min(args.rows, int(rate * args.seconds)) if rate else args.rows
                    client = f"bench-live-{learner}-{rate}"
                    broker.session(client, "live/in")
                    command = kestrel_flags(learner, broker.url("live/in"), [
                        "--client-id", client, "--max-rows", str(count), "--output", broker.url("live/out")])
                    before_broker = broker.cpu()
                    kestrel = start(command)
                    time.sleep(0.5)  # connected and subscribed
                    load = [LOAD, "127.0.0.1", str(broker.port), "live/in", "live/out", rows, str(count), str(rate)]
                    report, load_cpu = finish(start(load))
                    _, cpu = finish(kestrel)
                    broker_cpu = broker.cpu() - before_broker
                    latency.append((learner, rate, report, cpu, load_cpu, broker_cpu, shlex.join(command)))
        finally:
            broker.stop()

    print("| learner | input | rows/s | kestrel CPU s | Mosquitto CPU s |")
    print("|---|---|---:|---:|---:|")
    for learner, source, rate, cpu, broker_cpu, _ in throughput:
        broker_text = "" if broker_cpu is None else f"{broker_cpu:.2f}"
        print(f"| {learner} | {source} | {rate:,.0f} | {cpu:.2f} | {broker_text} |")
    print()
    print("| learner | publish rate asked | achieved msg/s | predictions | p50 ms | p99 ms | max ms "
          "| kestrel CPU s | load generator CPU s | Mosquitto CPU s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for learner, rate, report, cpu, load_cpu, broker_cpu, _ in latency:
        asked = f"{rate:,}" if rate else "max"
        print(f"| {learner} | {asked} | {report['publish_rate']:,.0f} | {report['received']:,}/{report['published']:,} "
              f"| {report['p50_ms']:.2f} | {report['p99_ms']:.2f} | {report['max_ms']:.2f} | {cpu:.2f} "
              f"| {load_cpu:.2f} | {broker_cpu:.2f} |")
    print()
    print("Commands:")
    for *_, command in throughput + latency:
        print(f"    {command}")
    print(f"    {LOAD} 127.0.0.1 PORT live/in live/out ROWS COUNT RATE   # the load generator")


if __name__ == "__main__":
    main()
