"""The prepared corpus at WMT's size: preparation's time, disk and peak memory, then each training process's memory and
the time to the first update, for a new run, a second run on the same data, a resumed run, and one process alone.
A benchmark, run once, not a test:

    python tools/prepared_scale.py --pairs 500000 4500000 --work /tmp/scale --repeats 3

Each corpus is synthetic: two Multi30k training pairs joined, about 25 words a side, gzipped (`$MULTI30K_DIR` or the
download cache gives Multi30k). It is prepared by `annotated-transformer prepare corpus` (its peak resident set is
the operating system's count, `ru_maxrss` of the command alone), then trained on for 20 updates of a tiny model, by `torchrun
--nproc_per_node=2` as a user would, and by one process. Each training process says its private memory (Private_Clean
+ Private_Dirty of /proc/self/smaps_rollup) once its first epoch's batches are made: what the data costs it. Every
0.2 s from the first update on, each one's anonymous memory (its heap, which a mapped corpus's pages are not) is
sampled, and the highest kept. Prints a Markdown table of the medians over the repeats.
"""

import argparse
import gzip
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psutil

from annotated_transformer.data import load_multi30k

TINY = "--N 1 --d-model 32 --d-ff 64 --h 2 --steps 20 --schedule eq3 --no-progress".split()
RECIPE = ["--vocabulary", "bpe"]  # what prepare and train agree on (the files' names give the languages)
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
CLI = ["-m", "annotated_transformer.cli"]
PEAK = """
import resource, subprocess, sys
subprocess.run([sys.executable, *sys.argv[1:]], check=True)
print("PEAK", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, flush=True)
"""  # runs a command and says its peak resident set (kB): the operating system's count, not a sample
TRAINER = "reporting.py"  # the training processes' script (torchrun's agent names it too)
REPORTING = """
import os, sys
from pathlib import Path
import annotated_transformer.batches as batches

make = batches.TokenBudgetSampler.batches
def make_and_report(self, epoch):
    made = make(self, epoch)
    if self.shuffle and not getattr(self, "reported", False):  # the training batches' first epoch: the data's cost
        self.reported = True
        rows = [line.split() for line in Path("/proc/self/smaps_rollup").read_text().splitlines()[1:]]
        kb = {row[0].rstrip(":"): int(row[1]) for row in rows}
        private = (kb["Private_Clean"] + kb["Private_Dirty"]) * 1024
        print(f"BATCHES MADE rank {os.environ.get('RANK', '0')} private {private}", file=sys.stderr, flush=True)
    return made
batches.TokenBudgetSampler.batches = make_and_report
from annotated_transformer.cli import main
sys.exit(main())
"""  # the command line, saying each process's private memory once its first epoch's batches are made


def write_synthetic(folder: Path, pairs: int) -> list[Path]:
    "Two Multi30k training pairs joined per line, `pairs` lines a side, gzipped; written once."
    files = [folder / f"train.{lang}.gz" for lang in ("de", "en")]
    if all(f.exists() for f in files):
        return files
    folder.mkdir(parents=True, exist_ok=True)
    train, rng = load_multi30k("train"), random.Random(0)
    with gzip.open(files[0], "wt", compresslevel=1) as de, gzip.open(files[1], "wt", compresslevel=1) as en:
        for _ in range(pairs):
            (a_de, a_en), (b_de, b_en) = rng.choice(train), rng.choice(train)
            de.write(f"{a_de} {b_de}\n")
            en.write(f"{a_en} {b_en}\n")
    return files


def smaps(pid: int) -> dict[str, int]:
    "A process's smaps_rollup, in bytes."
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value, *_ = line.split()
        fields[name.rstrip(":")] = int(value) * 1024
    return fields


def watch(command: list[str], env: dict, metrics: Path | None = None) -> dict:
    """Run `command`, sampling its processes' memory every 0.2 s; with a run's `metrics`, the seconds until its first new
    update, and each training process's highest anonymous memory from then on (its heap: a mapped corpus's pages are
    the page cache's, and count as a process's private pages while no other process has mapped them)."""
    updates = lambda: metrics.read_text().count('"update"') if metrics and metrics.exists() else 0
    start, peaks, reached, before = time.monotonic(), {}, None, updates()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tree = psutil.Process(process.pid)
    while process.poll() is None:
        if metrics and reached is None and updates() > before:
            reached = time.monotonic() - start
        try:
            procs = [tree, *tree.children(recursive=True)]
            peaks["tree_rss"] = max(peaks.get("tree_rss", 0), sum(p.memory_info().rss for p in procs))
            trainers = [
                p
                for p in procs
                if str(p.cmdline()).count(TRAINER) and "torch.distributed.run" not in p.cmdline()
            ]
            for p in trainers if reached else []:
                fields = smaps(p.pid)
                peak = peaks.setdefault(p.environ().get("RANK", "0"), dict(anonymous=0))
                peak["anonymous"] = max(peak["anonymous"], fields["Anonymous"])
        except (psutil.Error, FileNotFoundError, ProcessLookupError):
            pass
        time.sleep(0.2)
    out = process.stdout.read()
    assert process.returncode == 0, out[-3000:]
    return dict(peaks=peaks, seconds=time.monotonic() - start, first_update=reached, output=out)


def measure(pairs: int, work: Path, repeats: int) -> list[str]:
    "The table's rows for a corpus of `pairs` pairs: each run's medians over `repeats`, every process's private memory."
    files = write_synthetic(work / f"corpus-{pairs}", pairs)
    env = {**os.environ, "ANNOTATED_TRANSFORMER_CACHE": str(work / f"cache-{pairs}"), "OMP_NUM_THREADS": "1"}
    data = ["--train", *map(str, files)]
    prepared = watch([sys.executable, "-c", PEAK, *CLI, "prepare", "corpus", *data, *RECIPE], env)
    *said, line, peak = prepared["output"].strip().splitlines()
    peak = int(peak.removeprefix("PEAK ")) * 1024 / 1e9
    rows = [f"| {pairs:,} | prepare | {prepared['seconds']:.0f} s | peak resident {peak:.2f} GB | {line} |"]
    script = work / TRAINER
    script.write_text(REPORTING)
    runs = [  # (what, launcher, its run directory and options, given the repeat's number)
        ("2 processes, first run", TORCHRUN, lambda i: (f"first-{i}", [])),
        ("2 processes, second run", TORCHRUN, lambda i: (f"second-{i}", [])),
        ("2 processes, resumed", TORCHRUN, lambda i: (f"first-{i}", ["--resume", "--steps", "40"])),
        ("1 process", [sys.executable], lambda i: (f"single-{i}", [])),
    ]
    for name, launcher, arguments in runs:
        seen = []
        for i in range(repeats):
            out, extra = arguments(i)
            out = work / f"run-{pairs}-{out}"
            command = [
                *launcher,
                str(script),
                "train",
                "corpus",
                *data,
                *RECIPE,
                *TINY,
                *extra,
                "--out",
                str(out),
            ]
            run = watch(command, env, out / "metrics.jsonl")
            made = sorted(
                re.findall(r"BATCHES MADE rank (\d+) private (\d+)", run["output"])
            )  # the ranks may interleave
            steady = sum(run["peaks"][r]["anonymous"] for r in run["peaks"] if r.isdigit())
            seen.append((run["first_update"], [int(m[1]) / 1e6 for m in made], steady / 1e6))
        first, steady = (statistics.median(s[i] for s in seen) for i in (0, 2))
        each = "; ".join(" + ".join(f"{m:,.0f}" for m in s[1]) for s in seen)
        rows.append(f"| {pairs:,} | {name} | {first:.1f} s | {each} | {steady:,.0f} |")
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, nargs="+", default=[500_000, 4_500_000])
    parser.add_argument("--work", type=Path, default=Path("/tmp/prepared-scale"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(
        "| pairs | step | to the first update (median) | private MB when the first epoch's batches are made, each "
        "process (each repeat) | anonymous MB after 20 updates, all processes (median) |\n|--:|---|--:|--:|--:|"
    )
    for n in args.pairs:
        print("\n".join(measure(n, args.work, args.repeats)), flush=True)
