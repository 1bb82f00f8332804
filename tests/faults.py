"""The command line with a fault put in at a chosen point: the tests' way to stop a command exactly there (a
signal, a crash), rather than racing it with a clock."""

import sys
from pathlib import Path

# as the installed command calls it
MAIN = "import sys\nfrom annotated_transformer.cli import main\nsys.exit(main())\n"

KILLED_AFTER_FIRST_CHECKPOINT = """
import os, signal
import annotated_transformer.runs as runs
from annotated_transformer.resuming import Checkpoints

runs.CHECKPOINTS = dict(every=100)  # by updates, not by time: the first at update 100
AGENT = os.getppid() if os.environ.get("LOCAL_RANK") == "0" else None  # torchrun's, which the first process ends
save = Checkpoints.save
def save_then_die(self, state):
    save(self, state)
    self.processes.barrier()  # every process waits until the main one has written the checkpoint
    if AGENT:
        os.kill(AGENT, signal.SIGKILL)  # so that it restarts no process
    os.kill(os.getpid(), signal.SIGKILL)  # no chance to clean up, like a crash or a lost machine
Checkpoints.save = save_then_die
"""  # a run killed as soon as its first checkpoint is written: in a tiny run, at update 100, in mid-epoch


def with_fault(fault: str) -> list[str]:
    "The command line (its arguments to follow), in a Python that first runs `fault`: code that patches the package."
    return [sys.executable, "-c", fault + MAIN]


def script_with_fault(fault: str, path: Path) -> Path:
    "The same as a script at `path`, for a launcher that takes a script (torchrun)."
    path.write_text(fault + MAIN)
    return path


ENCODING_SAYS_WHERE = """
import os, sys
import annotated_transformer.prepared as prepared

encode = prepared.encode_pairs
def encode_and_say(*args, **kwargs):
    print(f"rank {os.environ.get('RANK', 0)} encodes", file=sys.stderr, flush=True)
    return encode(*args, **kwargs)
prepared.encode_pairs = encode_and_say
"""  # each process that encodes pairs says so on standard error

NEVER_ENCODES = """
import annotated_transformer.prepared as prepared

def refuse(*args, **kwargs):
    raise RuntimeError("a run encoded a corpus that was prepared already")
prepared.encode_pairs = refuse
"""  # a run that finds its corpus prepared must not encode a pair
