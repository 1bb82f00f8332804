"""Data-parallel training in two processes on the CPU (gloo), launched by torchrun as a user would.

Two processes must train exactly as one process that accumulates the same batches two at a time, and a
two-process run killed in the middle of an epoch must, once resumed, end where an uninterrupted run ends."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import torch
from corpora import write_corpus
from distributed_steps import run, setup
from faults import ENCODING_SAYS_WHERE, KILLED_AFTER_FIRST_CHECKPOINT, NEVER_ENCODES, script_with_fault

ROOT = Path(__file__).resolve().parent.parent
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}  # one thread per process: two processes on two cores


def torchrun(*args: str, env: dict = ENV) -> subprocess.CompletedProcess:
    result = subprocess.run([*TORCHRUN, *args], capture_output=True, text=True, cwd=ROOT, env=env)
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


def test_two_processes_train_as_one_accumulating_their_batches(tmp_path: Path):
    torchrun(str(ROOT / "tests" / "distributed_steps.py"), str(tmp_path))
    ranks = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in (0, 1)]
    for name, weights in ranks[0].items():
        assert torch.equal(weights, ranks[1][name]), name  # the replicas agree exactly
    model, optimizer, scheduler, loader = setup()
    history = run(
        model, optimizer, scheduler, loader, accum_iter=2
    )  # batches 2k and 2k+1 in update k, as the two processes had them
    # the updates went past the end of an epoch, where the processes drop a batch
    assert history.epoch.iloc[-1] == 1
    for name, weights in model.state_dict().items():
        torch.testing.assert_close(ranks[0][name], weights, rtol=1e-5, atol=1e-6, msg=name)


TINY = "--N 1 --d-model 32 --d-ff 64 --h 2 --bpe-size 800 --max-tokens 500 --warmup 50 --factor 1.0 --epochs 1 --no-progress".split()


def test_an_interrupted_two_process_run_resumes_exactly(tmp_path: Path):
    """Two processes prepare their corpus once (one encodes, the other waits and maps what it wrote); a second run on
    the same data and the resumed run encode nothing, and the resumed run ends where an uninterrupted run ends."""
    corpus = write_corpus(tmp_path / "corpus", train=13_112, test=500)
    env = {**ENV, "ANNOTATED_TRANSFORMER_CACHE": str(tmp_path / "cache")}  # nothing prepared yet
    cli = ["train", "multi30k", "--data-dir", str(corpus), *TINY]
    straight, interrupted = tmp_path / "straight", tmp_path / "interrupted"
    saying = script_with_fault(ENCODING_SAYS_WHERE, tmp_path / "saying.py")
    result = torchrun(str(saying), *cli, "--out", str(straight), env=env)
    per_process = 135  # batches an epoch: each process half of the 270 of this corpus at TINY's sizes
    assert "2 process(es)" in result.stdout and f"{per_process} batches per epoch" in result.stdout
    encoders = {line for line in result.stderr.splitlines() if line.endswith(" encodes")}  # "rank N encodes"
    # one process encoded; the other waited, then mapped the files
    assert len(encoders) == 1, result.stderr[-3000:]
    script = script_with_fault(NEVER_ENCODES + KILLED_AFTER_FIRST_CHECKPOINT, tmp_path / "killed.py")
    killed = subprocess.run(
        [*TORCHRUN, str(script), *cli, "--out", str(interrupted)], cwd=ROOT, env=env, timeout=600
    )
    assert killed.returncode == -signal.SIGKILL  # torchrun and both processes, with no chance to clean up
    killed_at = torch.load(interrupted / "last.pt", weights_only=True)["train_state"]
    assert (killed_at["epoch"], killed_at["step"]) == (0, 100)  # the first checkpoint, mid-epoch
    never = script_with_fault(NEVER_ENCODES, tmp_path / "never.py")
    log = torchrun(str(never), *cli, "--out", str(interrupted), "--resume", env=env).stdout
    assert "from epoch 0, update 100" in log, log
    ends = [torch.load(run / "last.pt", weights_only=True) for run in (straight, interrupted)]
    assert (
        ends[0]["prepared"] == ends[1]["prepared"]
        and (tmp_path / "cache" / "prepared" / ends[0]["prepared"]).is_dir()
    )
    assert [r["step"] for r in ends[1]["train_state"]["records"]] == list(range(1, per_process + 1))
    assert [r["loss"] for r in ends[1]["train_state"]["records"]] == [
        r["loss"] for r in ends[0]["train_state"]["records"]
    ]
    for name, weights in ends[0]["model"].items():
        assert torch.equal(weights, ends[1]["model"][name]), name


def test_train_copy_runs_once_under_torchrun():
    "The copy task does not train data-parallel: it trains in the first process alone, and says so, once."
    result = torchrun("-m", "annotated_transformer.cli", "train", "copy", "--epochs", "1", "--no-progress")
    assert result.stdout.count("exact copies:") == 1, result.stdout
    assert (
        result.stderr.count("train copy runs in one process: the first of the 2 that torchrun started") == 1
    ), result.stderr


def test_a_process_that_stops_answering_is_given_up_on(tmp_path: Path):
    "One process hangs before a collective: the other gives up after the timeout with a clear message, not after 30 min."
    script = tmp_path / "hang.py"
    script.write_text(
        "import time\n"
        "import torch.distributed as dist\n"
        "from annotated_transformer.distributed import distributed\n"
        "with distributed(timeout_minutes=0.1) as processes:\n"
        "    if processes.rank == 1:\n"
        "        time.sleep(60)  # stopped, as far as the other one can tell\n"
        "    dist.barrier()\n"
    )
    result = subprocess.run([*TORCHRUN, str(script)], capture_output=True, text=True, cwd=ROOT, env=ENV)
    # had the timeout not worked, the barrier would have passed after the minute's sleep
    assert result.returncode != 0
    assert "Process 0 waited 0.1 minutes for the others, and one did not answer" in result.stderr, (
        result.stderr[-3000:]
    )
