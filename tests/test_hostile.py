"""The command line under careless or hostile use, as a user meets it, on a tiny run: each case through `cli.main` in
this process, or in a process of its own where stdout is a file, the environment changes or a signal is sent.

Every case must end in a clear one-line error or in correct behaviour, never in a traceback, and must leave the
run's files as they were. The training-side cases (a second run in a locked directory, resuming with changes,
recipe values out of range, a full disk while saving) are demonstrated in the notebooks; these are the ones a
user reaches through the commands' input and output."""

import contextlib
import hashlib
import io
import json
import os
import pickle
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from unittest.mock import patch

import pytest
import torch
from corpora import first_lines, write_corpus
from faults import with_fault

from annotated_transformer import ctranslate2_format, model_directory
from annotated_transformer.checkpoints import read_checkpoint, write_checkpoint
from annotated_transformer.cli import main
from annotated_transformer.formats import open_translator
from annotated_transformer.model_directory import description_sha256
from annotated_transformer.translation import translate_stream

# its module-scoped fixtures are built once, on one worker
pytestmark = pytest.mark.xdist_group("test_hostile")

ROOT = Path(__file__).resolve().parent.parent
TINY = "--N 1 --d-model 32 --d-ff 64 --h 2 --bpe-size 800 --epochs 1 --no-progress".split()


def train_args(data, out: Path, *more: str) -> list[str]:
    "`train multi30k` on the Multi30k files in `data`, into `out`, with `more` options."
    return ["train", "multi30k", "--data-dir", str(data), "--out", str(out), *more]


def cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    """Run `annotated-transformer ARGS` and return what happened, whatever its status: through `main` in this process
    where only stdin and the output matter (no torch to import again), else as `python -m annotated_transformer.cli`."""
    if not kwargs.get("capture_output") or set(kwargs) - {"capture_output", "text", "input"}:
        return subprocess.run([sys.executable, "-m", "annotated_transformer.cli", *args], cwd=ROOT, **kwargs)
    out, err = io.StringIO(), io.StringIO()
    stdin = io.TextIOWrapper(io.BytesIO(kwargs.get("input") or b""), encoding="utf-8")
    with patch.object(sys, "stdin", stdin), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(args))
        except SystemExit as e:  # argparse's refusals
            status = e.code
    said = [out.getvalue(), err.getvalue()]
    return subprocess.CompletedProcess(
        args, status, *(said if kwargs.get("text") else [s.encode() for s in said])
    )


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def digests(run: Path) -> dict[str, str]:
    "The digest of each checkpoint of a run, by name: what must not change."
    return {p.name: digest(p) for p in run.glob("*.pt")}


def clear_error(result: subprocess.CompletedProcess, status: int, *phrases: str):
    "The command ended with `status` and one line on stderr holding `phrases`, not a traceback."
    err = result.stderr.decode() if isinstance(result.stderr, bytes) else result.stderr
    assert result.returncode == status, (result.returncode, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for phrase in phrases:
        assert phrase in err, (phrase, err)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    "A trained tiny run of the Multi30k recipe (one epoch on the tests' corpus), of Eq. (3)'s schedule: it extends."
    home = tmp_path_factory.mktemp("hostile")
    data = write_corpus(home / "data", train=2000, test=50)
    # a finished run of the recipe's planned schedule cannot be extended (test_cli)
    eq3 = [*TINY, "--schedule", "eq3"]
    result = cli(
        "train", "multi30k", "--data-dir", str(data), "--out", str(home / "run"), *eq3, capture_output=True
    )
    assert result.returncode == 0, result.stderr
    return home / "run"


@pytest.fixture
def translate(run: Path):
    def translate(stdin: bytes, *args: str, **kwargs) -> subprocess.CompletedProcess:
        return cli(
            "translate", "--checkpoint", str(run / "last.pt"), "--beam", "1", *args, input=stdin, **kwargs
        )

    return translate


SENTENCES = "".join(f"Ein Hund läuft {i}.\n" for i in range(300)).encode()


def test_translate_into_a_closed_pipe_stops_quietly(run: Path):
    "`translate | head -1`: one line out, no traceback, the status of a tool cut off by its reader."
    pipe = f"{sys.executable} -m annotated_transformer.cli translate --checkpoint {run / 'last.pt'} --beam 1 | head -1"
    result = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {pipe}"], input=SENTENCES, capture_output=True, cwd=ROOT
    )
    assert len(result.stdout.decode().splitlines()) == 1
    assert result.returncode == 141 and result.stderr == b"", (result.returncode, result.stderr)


@pytest.mark.parametrize(
    "closed, phrase", [("<&-", "Standard input is closed"), (">&-", "Standard output is closed")]
)
def test_translate_with_a_standard_stream_closed_says_so(run: Path, closed: str, phrase: str):
    "`translate <&-` (0.10.3: AttributeError on None, reported as a bug), and the same for its output."
    command = (
        f"{sys.executable} -m annotated_transformer.cli translate --checkpoint {run / 'last.pt'} {closed}"
    )
    # bash closes it
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=ROOT)
    clear_error(result, 2, phrase)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
def test_translate_onto_a_full_disk_says_so(translate):
    with open("/dev/full", "w") as full:
        result = translate(SENTENCES, stdout=full, stderr=subprocess.PIPE)
    clear_error(result, 2, "Could not write the translations to standard output (No space left on device)")


def test_translate_names_a_line_that_is_not_utf8(translate):
    text = b"Ein Hund.\nEine Kat\xe4ze.\nZwei Hunde.\n"
    stopped = translate(text, capture_output=True)
    clear_error(stopped, 2, "input line 2 is not UTF-8", "--on-error skip")
    assert len(stopped.stdout.decode().splitlines()) == 1  # the line before it, translated
    skipped = translate(text, "--on-error", "skip", capture_output=True)
    clear_error(skipped, 0, "input line 2 skipped")
    lines = skipped.stdout.decode().split("\n")
    assert len(lines) == 4 and lines[0] and lines[1] == "" and lines[2], lines  # still aligned with the input


def test_a_foreign_pickle_is_refused_without_running_it(tmp_path: Path):
    "A checkpoint that would run code when unpickled: refused, the code not run, no advice to load it in full."
    ran = tmp_path / "payload-ran"

    class Payload:
        def __reduce__(self):
            return (Path.touch, (ran,))

    foreign = tmp_path / "last.pt"
    foreign.write_bytes(pickle.dumps({"model": Payload()}))
    result = cli("translate", "--checkpoint", str(foreign), input=b"Ein Hund.\n", capture_output=True)
    clear_error(result, 2, "could run code")
    assert b"weights_only" not in result.stderr and not ran.exists()


def test_a_truncated_checkpoint_is_one_clear_error(run: Path, tmp_path: Path):
    torn = tmp_path / "torn.pt"
    torn.write_bytes((run / "last.pt").read_bytes()[:5000])
    clear_error(
        cli("translate", "--checkpoint", str(torn), input=b"x\n", capture_output=True), 2, "Could not read"
    )


@pytest.mark.parametrize(
    "args, phrase",
    [
        (["--last", "1", "--out", "{run}/last.pt"], "last.pt"),  # over the run's resumable checkpoint
        (["--last", "1", "--out", "{run}/epoch_01.pt"], "epoch_01.pt"),  # over one of its own inputs
        (["--last", "0"], "at least one snapshot"),
        (["--last", "-3"], "at least one snapshot"),
        (["--out", "{run}/last.pt"], "last.pt"),  # choosing on validation refuses the same, before any work
        (["--out", "{run}/epoch_01.pt"], "epoch_01.pt"),
    ],
)
def test_average_refuses_what_would_destroy_a_run(run: Path, args: list[str], phrase: str):
    before = digests(run)
    result = cli("average", str(run), *[a.format(run=run) for a in args], capture_output=True, text=True)
    clear_error(result, 2, phrase)
    assert digests(run) == before


@pytest.mark.parametrize(
    "args, phrase",
    [
        (["--h", "3"], "h must be at least 1 and a divisor of d_model"),
        (["--eps-ls", "1.0"], "eps_ls must be in [0, 1)"),
        (["--factor", "nan"], "factor must be positive and finite"),
        (["--device", "banana"], "banana"),
    ],
)
def test_bad_training_values_are_one_line_and_touch_nothing(run: Path, args: list[str], phrase: str):
    before = digests(run)
    result = cli("train", "multi30k", "--out", str(run), "--resume", *args, capture_output=True, text=True)
    clear_error(result, 2, phrase)
    assert digests(run) == before


def test_a_resumed_run_reads_its_checkpoint_once(run: Path, tmp_path: Path):
    "`--resume` reads last.pt in full once, however large it is (the command's look at its recipe maps it)."
    copy = Path(shutil.copytree(run, tmp_path / "run"))
    load = torch.load
    full_reads = []

    def counted(path, *args, **kwargs):
        if Path(path).name == "last.pt" and not kwargs.get("mmap"):
            full_reads.append(path)
        return load(path, *args, **kwargs)

    with patch("torch.load", counted):
        data = ["--data-dir", str(run.parent / "data")]
        result = cli(
            "train", "multi30k", *data, "--out", str(copy), "--resume", "--epochs", "2", capture_output=True
        )
    assert result.returncode == 0, result.stderr
    assert len(full_reads) == 1, full_reads


def test_a_new_run_over_an_old_one_is_refused(run: Path):
    before = digest(run / "last.pt")
    clear_error(
        cli("train", "multi30k", "--out", str(run), *TINY, capture_output=True, text=True), 2, "--resume"
    )
    assert digest(run / "last.pt") == before


@pytest.mark.parametrize(
    "emptied, args, phrase",
    [
        ("train", [], "The train split holds no sentence pairs"),
        ("val", [], "The val split holds no sentence pairs"),
        (None, ["--max-len", "3"], "training pairs are longer than max_len=3"),
    ],
)
def test_data_with_nothing_to_train_on_is_refused_before_training(
    run: Path, tmp_path: Path, emptied: str | None, args: list[str], phrase: str
):
    "Empty training or validation files, or a --max-len that drops every pair: an error before the first update."
    data = tmp_path / "data"
    data.mkdir()
    for source in (run.parent / "data").iterdir():
        (data / source.name).write_bytes(
            b"" if source.name.startswith(f"{emptied}.") else source.read_bytes()
        )
    result = cli(
        *train_args(data, tmp_path / "run", *TINY, *args),
        capture_output=True,
        text=True,
    )
    clear_error(result, 2, phrase)
    assert not list((tmp_path / "run").glob("*.pt"))


def test_resume_refuses_a_change_it_cannot_honour(run: Path, tmp_path: Path):
    "An option given with --resume counts, even when it equals the default; and the data must be the run's own."
    before = digest(run / "last.pt")
    clear_error(
        cli(
            "train",
            "multi30k",
            "--out",
            str(run),
            "--resume",
            "--d-model",
            "256",
            capture_output=True,
            text=True,
        ),
        2,
        "trained with d_model=32 (not 256)",
    )
    other = tmp_path / "other"
    other.mkdir()
    for source in (run.parent / "data").iterdir():  # the same files, less their first training pair
        lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
        (other / source.name).write_text("".join(lines[1:] if source.name.startswith("train.") else lines))
    result = cli(
        *train_args(other, run, "--resume", "--epochs", "2"),
        capture_output=True,
        text=True,
    )
    clear_error(result, 2, "trained on other sentence pairs")
    assert digest(run / "last.pt") == before


def test_a_run_directory_belongs_to_one_run(run: Path, tmp_path: Path):
    "Another run's snapshots stop a new run (unless told to start over) and are never averaged as the run's own."
    out, data = tmp_path / "new", run.parent / "data"
    out.mkdir()
    (out / "epoch_16.pt").write_bytes((run / "epoch_01.pt").read_bytes())  # left over from another run
    refused = cli(*train_args(data, out, *TINY), capture_output=True, text=True)
    clear_error(refused, 2, "already holds a run (epoch_16.pt)", "--start-over")
    assert [p.name for p in out.glob("*.pt")] == ["epoch_16.pt"]
    started = cli(
        *train_args(data, out, *TINY, "--start-over"),
        capture_output=True,
        text=True,
    )
    assert started.returncode == 0, started.stderr
    assert sorted(p.name for p in out.glob("*.pt")) == ["epoch_01.pt", "last.pt"]
    # another run's snapshot, slipped in
    (out / "epoch_00.pt").write_bytes((run / "epoch_01.pt").read_bytes())
    averaged = cli("average", str(out), "--last", "1", capture_output=True, text=True)
    assert averaged.returncode == 0 and "averaged epoch_01.pt into" in averaged.stdout, (
        averaged.stdout + averaged.stderr
    )
    too_many = cli("average", str(out), "--last", "2", capture_output=True, text=True)
    clear_error(too_many, 2, "holds 1 weight snapshots")  # the stranger does not count


def test_average_refuses_the_weights_of_two_runs(run: Path, tmp_path: Path):
    "Two runs of one shape have no common path: their mean is refused, in one line, and nothing is written."
    from annotated_transformer.checkpoints import read_checkpoint, write_checkpoint

    other = read_checkpoint(run / "last.pt")
    other["run_id"] = "another run"
    write_checkpoint(tmp_path / "other.pt", other)
    mix = tmp_path / "mix.pt"
    result = cli(
        "average",
        str(run / "last.pt"),
        str(tmp_path / "other.pt"),
        "--out",
        str(mix),
        capture_output=True,
        text=True,
    )
    clear_error(result, 2, "come from 2 different runs")
    assert not mix.exists()


@pytest.mark.parametrize(
    "tamper, phrase",
    [
        (lambda s: s["model"].pop("generator.proj.bias"), "do not fit its configuration"),
        (lambda s: s["vocabs"]["src"].pop(), "holds vocabularies of"),
        # nothing allocated
        (lambda s: s["config"].update(d_model=2**30, d_ff=2**30), "do not fit its configuration"),
        (lambda s: s["config"].update(h=7), "configuration that is not valid"),
        (lambda s: s.update(bpe=b"not a sentencepiece model"), "cannot be loaded"),
    ],
)
def test_a_tampered_checkpoint_is_one_clear_error(run: Path, tmp_path: Path, tamper, phrase: str):
    from annotated_transformer.checkpoints import read_checkpoint, write_checkpoint

    saved = read_checkpoint(run / "last.pt")
    tamper(saved)
    write_checkpoint(tmp_path / "tampered.pt", saved)  # loadable: a fresh checksum over the altered contents
    result = cli(
        "translate", "--checkpoint", str(tmp_path / "tampered.pt"), input=b"Ein Hund.\n", capture_output=True
    )
    clear_error(result, 2, phrase)


def test_flipped_bytes_in_a_weight_are_caught(run: Path, tmp_path: Path):
    "64 bytes zeroed inside a weight tensor: the checksum names the file, nothing is translated with it."
    from annotated_transformer.checkpoints import read_checkpoint

    weight = read_checkpoint(run / "last.pt")["model"]["generator.proj.weight"]
    raw = bytearray((run / "last.pt").read_bytes())
    at = raw.find(weight.numpy().tobytes())  # where the weight's bytes lie in the file
    assert at > 0
    raw[at + 1000 : at + 1064] = bytes(64)
    (tmp_path / "damaged.pt").write_bytes(raw)
    result = cli(
        "translate", "--checkpoint", str(tmp_path / "damaged.pt"), input=b"Ein Hund.\n", capture_output=True
    )
    clear_error(result, 2, "damaged.pt is damaged")
    assert result.stdout == b""


def test_a_second_run_in_a_busy_directory_is_refused_and_the_first_finishes(run: Path, tmp_path: Path):
    "Two runs into one --out: the second stops at once with a clear error; the first trains on and ends well."
    out, data = tmp_path / "busy", run.parent / "data"
    args = ["train", "multi30k", "--data-dir", str(data), "--out", str(out), *TINY]
    first = subprocess.Popen(
        [sys.executable, "-m", "annotated_transformer.cli", *args, "--epochs", "3"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    # the first holds the directory
    while not (out / ".lock").exists() or not (out / ".lock").read_text().strip():
        assert time.monotonic() < deadline and first.poll() is None, first.communicate()
        time.sleep(0.2)
    second = cli(*args, "--seed", "1", capture_output=True, text=True)
    # whichever it meets first: the first run's lock, or the files it has begun to write
    clear_error(second, 2)
    assert "Another training run (process" in second.stderr or "already holds a run" in second.stderr, (
        second.stderr
    )
    stdout, stderr = first.communicate(timeout=300)
    assert first.returncode == 0, stderr
    assert sorted(p.name for p in out.glob("*.pt")) == [
        "epoch_01.pt",
        "epoch_02.pt",
        "epoch_03.pt",
        "last.pt",
    ]


def _file_size_limit(limit: int):
    "For a child process: files may grow to `limit` bytes, and a longer write fails (EFBIG), as on a full disk."

    def limit_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failing write, not a killed process

    return limit_files


def test_a_write_that_fails_keeps_the_last_checkpoint(run: Path, tmp_path: Path):
    "Resuming where no file may exceed 100 kB (a checkpoint is larger): one line, the previous last.pt as it was."
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    before = digest(copy / "last.pt")
    result = cli(
        *train_args(run.parent / "data", copy, "--resume", "--epochs", "2", "--no-progress"),
        capture_output=True,
        text=True,
        preexec_fn=_file_size_limit(100_000),
    )
    clear_error(result, 2, "Could not write", "is the disk full")
    assert digest(copy / "last.pt") == before
    assert not list(copy.glob("*.tmp"))


@pytest.mark.parametrize(
    "args, phrase",
    [
        (["--alpha", "nan"], "length penalty α must be 0 or more, and finite"),
        (["--alpha", "inf"], "length penalty α must be 0 or more, and finite"),
        (["--alpha", "1e9"], "(at most 10.0), not 1000000000.0"),
        (["--beam", "0"], "beam size must be 1 (greedy) or more"),
        (["--device", "cuda:7"], "cuda"),
        pytest.param(
            ["--device", "mps"],
            "no Apple GPU (MPS); use --device cpu",
            marks=pytest.mark.skipif(
                torch.backends.mps.is_available(), reason="this machine has an Apple GPU"
            ),
        ),
        (["--device", "meta"], "give cpu, cuda or mps, not meta"),
        (["--beam", "1000000"], "cannot run that search: a beam of 1,000,000 needs a vocabulary of at least"),
    ],
)
def test_bad_search_values_are_one_line(run: Path, args: list[str], phrase: str):
    result = cli(
        "translate", "--checkpoint", str(run / "last.pt"), *args, input=b"Ein Hund.\n", capture_output=True
    )
    clear_error(result, 2, phrase)
    assert result.stdout == b""


@pytest.fixture(scope="module")
def model_dir(run: Path) -> Path:
    "The tiny run, exported as a model directory."
    result = cli("export", str(run), "--out", str(run.parent / "model"), capture_output=True)
    assert result.returncode == 0, result.stderr
    return run.parent / "model"


def _copy(model_dir: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(model_dir, tmp_path / "model"))


def _with_heads(model_dir: Path, h: int):
    "Edit the number of heads in config.json: the weights' shapes still fit (on e80b885 it loaded, and translated otherwise)."
    config = json.loads((model_dir / "config.json").read_text())
    config["model"]["h"] = h
    (model_dir / "config.json").write_text(json.dumps(config))


@pytest.mark.parametrize(
    "damage, phrase",
    [
        (
            lambda d: (d / "config.json").write_text('{"format": "annotated-transformer-model/1", '),
            "is not valid JSON",
        ),
        (
            lambda d: (d / "config.json").write_text('{"format": "something-else/9"}'),
            "of format 'something-else/9'",
        ),
        (
            lambda d: (d / "model.safetensors").write_bytes((d / "model.safetensors").read_bytes()[:-64]),
            "model.safetensors is damaged",
        ),
        (lambda d: (d / "config.json").unlink(), "holds no config.json"),
        (lambda d: _with_heads(d, 4), "was changed after it was written"),
    ],
)
def test_a_damaged_model_directory_is_one_clear_error(model_dir: Path, tmp_path: Path, damage, phrase: str):
    damaged = _copy(model_dir, tmp_path)
    damage(damaged)
    result = cli("translate", "--model", str(damaged), input=b"Ein Hund.\n", capture_output=True)
    clear_error(result, 2, phrase)
    assert result.stdout == b""


@pytest.mark.parametrize("own", ["--source", "--reference"])
def test_evaluate_never_writes_its_hypotheses_over_what_it_scores(run: Path, tmp_path: Path, own: str):
    "`evaluate --hypotheses` naming its own --source or --reference: one line, both files as they were (on 1532877 replaced)."
    files = {"--source": tmp_path / "test.de", "--reference": tmp_path / "test.en"}
    for path, lang in zip(files.values(), ("de", "en")):
        path.write_text("".join(line + "\n" for line in first_lines("test", lang, 20)), encoding="utf-8")
    before = {path: path.read_bytes() for path in files.values()}
    scored = [
        "evaluate",
        "--model",
        str(run / "last.pt"),
        "--beam",
        "1",
        *(str(x) for f in files.items() for x in f),
    ]
    result = cli(*scored, "--hypotheses", str(files[own]), capture_output=True, text=True)
    clear_error(result, 2, "is a file to score, which it would replace")
    assert {path: path.read_bytes() for path in files.values()} == before


@pytest.mark.parametrize("same", ["one file", "a copy"])
def test_evaluate_refuses_sources_that_are_their_own_references(run: Path, tmp_path: Path, same: str):
    "`evaluate --source X --reference X`, or a copy of X: 0.10.3 scored the file against itself without a word."
    source = tmp_path / "test.de"
    source.write_text("".join(line + "\n" for line in first_lines("test", "de", 20)), encoding="utf-8")
    reference = source if same == "one file" else tmp_path / "copy.en"
    reference.write_bytes(source.read_bytes())
    scored = [
        "evaluate",
        "--model",
        str(run / "last.pt"),
        "--source",
        str(source),
        "--reference",
        str(reference),
    ]
    clear_error(cli(*scored, capture_output=True, text=True), 2, "Each reference is its own source sentence")


def test_sigterm_while_average_writes_leaves_no_partial_file(run: Path, tmp_path: Path):
    """SIGTERM just as `average` has written its file, before the file takes its name: one line, no `.tmp` left and no
    average (on 1532877 the process died there and left average_1.pt.tmp)."""
    out = Path(shutil.copytree(run, tmp_path / "run"))
    stopped_while_saving = (
        "import signal, sys, torch; save = torch.save; "
        "torch.save = lambda *a, **k: (save(*a, **k), signal.raise_signal(signal.SIGTERM)); "
        "from annotated_transformer.cli import main; sys.exit(main())"
    )
    command = [sys.executable, "-c", stopped_while_saving, "average", str(out), "--last", "1"]
    clear_error(subprocess.run(command, cwd=ROOT, capture_output=True, text=True), 130, "interrupted")
    assert not list(out.glob("*.tmp")) and not list(out.glob("average_*"))


def _overwrite_middle(path: Path, size: int):
    "`size` bytes in the middle of the file zeroed, its length kept."
    with path.open("r+b") as f:
        f.seek(path.stat().st_size // 2 - size // 2)
        f.write(bytes(size))


@pytest.mark.parametrize(
    "format, damage, phrase",
    [
        ("ctranslate2", lambda d: _overwrite_middle(d / "model.bin", 65536), "model.bin is not the file"),
        ("ctranslate2", lambda d: os.truncate(d / "model.bin", 4096), "model.bin is not the file"),
        ("ctranslate2", lambda d: (d / "config.json").unlink(), "config.json is missing"),
        ("onnx", lambda d: (d / "text.json").write_text('{"source": {}}'), "text.json is not the file"),
    ],
)
def test_every_file_of_an_exported_directory_is_checked(
    run: Path, tmp_path: Path, format: str, damage, phrase: str
):
    """CTranslate2's weights, truncated or with 64 KiB overwritten, its deleted configuration, or the browser's rules
    edited: one line naming the file, never a translation (on 1532877: other translations with exit 0 for the
    overwritten weights, a traceback for the truncated ones and for the deleted configuration; the rules unchecked)."""
    out = tmp_path / format
    assert cli("export", str(run), "--out", str(out), "--format", format, capture_output=True).returncode == 0
    damage(out)
    result = cli("translate", "--model", str(out), input=b"Ein Hund.\n", capture_output=True, text=True)
    clear_error(result, 2, phrase)
    assert result.stdout == ""


@pytest.mark.parametrize(
    "case, phrase",
    [
        ("a typo in --data-dir", "is not a directory"),
        ("blank validation lines", "empty line(s)"),
        ("a --max-tokens below the longest sentence", "smaller than the longest sentence"),
        ("tensorboard/ a link", "tensorboard is a link"),
        (".lock a link", ".lock is a link"),
    ],
)
def test_start_over_deletes_nothing_before_the_new_run_is_checked(
    run: Path, tmp_path: Path, case: str, phrase: str
):
    """--start-over with a mistake in the new run's data, or a link in the old run's directory: one line, and the old
    run's files, and what a link points to, as they were (on 1532877: last.pt deleted first; the folder a linked
    tensorboard/ points to emptied; the file a linked .lock points to overwritten with a process id)."""
    out, data = (
        Path(shutil.copytree(run, tmp_path / "run")),
        Path(shutil.copytree(run.parent / "data", tmp_path / "data")),
    )
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "mine.txt").write_text("mine")
    if case == "a typo in --data-dir":
        data = tmp_path / "dta"
    elif case == "blank validation lines":
        (data / "val.en").write_text("\n" * 50)
    elif case == "tensorboard/ a link":
        shutil.rmtree(out / "tensorboard", ignore_errors=True)
        (out / "tensorboard").symlink_to(notes)
    elif case == ".lock a link":
        (out / ".lock").unlink(missing_ok=True)
        (out / ".lock").symlink_to(notes / "mine.txt")
    command = ["train", "multi30k", "--data-dir", str(data), "--out", str(out), *TINY, "--start-over"]
    command += ["--max-tokens", "10"] if case.startswith("a --max-tokens") else []
    clear_error(cli(*command, capture_output=True, text=True), 2, phrase)
    assert (out / "last.pt").is_file() and [p.name for p in notes.iterdir()] == ["mine.txt"]
    assert (notes / "mine.txt").read_text() == "mine"


@pytest.mark.parametrize(
    "args, phrase",
    [
        (["--quantization", "int8"], "Quantization is for --format ctranslate2"),
        (["--out", "/dev/null/model"], "/dev/null/model"),
    ],
)
def test_export_refuses_what_it_cannot_write(run: Path, tmp_path: Path, args: list[str], phrase: str):
    result = cli(
        "export",
        str(run),
        *(["--out", str(tmp_path / "x")] if "--out" not in args else []),
        *args,
        capture_output=True,
    )
    clear_error(result, 2, phrase)


def test_an_exported_model_translates_as_its_checkpoint(run: Path, model_dir: Path):
    "The same translations from the checkpoint and from its model directory, with the same search."
    text = b"Ein Hund rennt.\nZwei Frauen sitzen auf einer Bank.\n"
    from_checkpoint = cli("translate", "--model", str(run / "last.pt"), input=text, capture_output=True)
    from_directory = cli("translate", "--model", str(model_dir), input=text, capture_output=True)
    assert from_checkpoint.returncode == from_directory.returncode == 0, from_directory.stderr
    assert from_directory.stdout == from_checkpoint.stdout and from_directory.stdout.count(b"\n") == 2


def test_a_byte_order_mark_in_a_reference_changes_no_score(run: Path, tmp_path: Path):
    "`evaluate --reference` of a file an editor saved with a byte-order mark scores as the file without one."
    source, reference, hypotheses = tmp_path / "test.de", tmp_path / "test.en", tmp_path / "hypotheses.en"
    for path, lang in ((source, "de"), (reference, "en")):
        path.write_text("".join(line + "\n" for line in first_lines("test", lang, 20)), encoding="utf-8")
    evaluate = f"evaluate --model {run / 'last.pt'} --beam 1 --source {source} --json".split()
    # a first evaluation only to have the model's translations written to `hypotheses`; its score is not looked at
    first = cli(
        *evaluate, "--reference", str(reference), "--hypotheses", str(hypotheses), capture_output=True
    )
    assert first.returncode == 0, first.stderr
    marked = tmp_path / "marked.en"  # the model's own translations as the reference: a perfect score
    marked.write_bytes(b"\xef\xbb\xbf" + hypotheses.read_bytes())
    scored = cli(*evaluate, "--reference", str(marked), capture_output=True, text=True)
    assert scored.returncode == 0, scored.stderr
    assert abs(json.loads(scored.stdout)["sacrebleu"] - 100) < 1e-6, scored.stdout


@pytest.mark.parametrize(
    "args, phrases",
    [
        (["--epochs", "3", "--minutes", "0.001"], ["too few for one more epoch", "--minutes 0 for no limit"]),
        (["--epochs", "1"], ["it has trained all --epochs 1", "give more --epochs"]),
    ],
)
def test_a_resumed_run_with_nothing_left_to_train_says_which_option_extends_it(
    run: Path, tmp_path: Path, args: list[str], phrases: list[str]
):
    """More epochs for a run whose time budget is spent, or none: it stops before any work and names the option (on
    e80b885 it made no update, printed `train loss 0.000`, and wrote a snapshot of the same weights, which `average`
    then counted twice)."""
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    before = digests(copy)
    data = ["--data-dir", str(run.parent / "data")]
    resumed = ["--out", str(copy), "--resume", "--snapshot-minutes", "1", "--no-progress", *args]
    result = cli("train", "multi30k", *data, *resumed, capture_output=True, text=True)
    clear_error(result, 2, "would train nothing", *phrases)
    assert digests(copy) == before and not list(copy.glob("step_*.pt"))


def test_a_checkpoint_whose_configuration_was_edited_is_refused(run: Path, tmp_path: Path):
    """A checkpoint with its number of heads edited, which its weights' shapes still fit: one clear error (on e80b885
    it loaded and translated otherwise, its checksum covering its tensors alone)."""
    saved = torch.load(run / "last.pt", weights_only=True)
    saved["config"]["h"] = 4
    torch.save(saved, tmp_path / "edited.pt")
    result = cli(
        "translate",
        "--model",
        str(tmp_path / "edited.pt"),
        "--beam",
        "1",
        input=b"Ein Hund.\n",
        capture_output=True,
    )
    clear_error(result, 2, "is damaged or was altered")


def test_export_never_overwrites_a_users_own_files(run: Path, tmp_path: Path):
    "`export --out DIR` into a directory of the user's own: refused, their README.md as it was (on e80b885, replaced)."
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "README.md").write_text("my notes")
    clear_error(
        cli("export", str(run), "--out", str(mine), capture_output=True), 2, "holds files no export wrote"
    )
    assert (mine / "README.md").read_text() == "my notes" and sorted(p.name for p in mine.iterdir()) == [
        "README.md"
    ]


def test_an_exported_model_can_be_read_by_others(model_dir: Path):
    "The weights get the permissions of the directory's other files (on e80b885: 0600, for their owner alone)."
    modes = {p.name: p.stat().st_mode & 0o777 for p in model_dir.iterdir()}
    assert modes["model.safetensors"] == modes["config.json"], modes


def test_a_run_resumes_after_a_crash_cut_its_last_metrics_line(run: Path, tmp_path: Path):
    "A torn last line in metrics.jsonl, as a crash leaves: --resume drops it and trains on (on e80b885: a JSON error)."
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    with open(copy / "metrics.jsonl", "a") as f:
        f.write('{"kind": "update", "step": 9')  # cut short
    resumed = ["--out", str(copy), "--resume", "--epochs", "2", "--no-progress"]
    result = cli(
        "train", "multi30k", "--data-dir", str(run.parent / "data"), *resumed, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    # every line whole
    records = [json.loads(line) for line in (copy / "metrics.jsonl").read_text().splitlines()]
    assert max(r["epoch"] for r in records) == 2, records[-1]


def _interruptible():
    "For a child process: Ctrl-C (SIGINT) as at a terminal. A test runner's worker may ignore it, and children inherit that."
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_training(out: Path, data: Path, *args: str) -> subprocess.Popen:
    "A tiny run in its own process, started and left running: one that trains for long enough to be stopped."
    command = train_args(data, out, *TINY, "--epochs", "200", *args)
    return subprocess.Popen(
        [sys.executable, "-m", "annotated_transformer.cli", *command],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_interruptible,
    )


def _wait_for_updates(process: subprocess.Popen, out: Path, updates: int):
    "Wait until the run's metrics.jsonl holds `updates` update lines."
    deadline = time.monotonic() + 120
    while _updates(out) < updates:
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.1)


def _updates(out: Path) -> int:
    metrics = out / "metrics.jsonl"
    return metrics.read_text().count('"kind": "update"') if metrics.exists() else 0


SLOW_EXIT_AND_CTRL_C_AS_DATA_IS_PREPARED = """
import atexit, os, signal, time
atexit.register(time.sleep, 30)  # an exit handler as slow as torch's can be, run last
import annotated_transformer.runs as runs

prepare = runs.run_data
def interrupted(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, as the run starts to prepare its data
    return prepare(*args, **kwargs)
runs.run_data = interrupted
"""


def test_a_second_ctrl_c_while_a_command_exits_ends_it_at_once(tmp_path: Path):
    """Ctrl-C while a new run prepares its data, then again while Python runs its exit handlers (one made slow here, as
    torch's can be): the one line, then the process ends at once, with nothing more said (on 2660d33: "Exception
    ignored in atexit callback" and a traceback from torch/library.py), and no run directory is left."""
    out, data = tmp_path / "run", write_corpus(tmp_path / "data", train=13_112, test=500)
    command = [
        *with_fault(SLOW_EXIT_AND_CTRL_C_AS_DATA_IS_PREPARED),
        "train",
        "multi30k",
        "--data-dir",
        str(data),
    ]
    process = subprocess.Popen(
        [*command, "--out", str(out), *TINY],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_interruptible,
    )
    # "", then the line (which starts on a line of its own)
    said = [process.stderr.readline() for _ in range(2)]
    process.send_signal(signal.SIGINT)  # while it exits
    _, rest = process.communicate(timeout=20)  # at once, not after the exit handler's 30 s
    assert said[1].startswith("interrupted: nothing was saved") and rest == "", (said, rest)
    assert process.returncode == -signal.SIGINT and not out.exists()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_run_told_to_stop_saves_its_last_update(run: Path, tmp_path: Path, stop: int):
    "SIGTERM (a scheduler, `docker stop`) or Ctrl-C: the run stops after its update in progress, saves it, and says so."
    out, data = tmp_path / "run", run.parent / "data"
    process = _start_training(out, data)
    _wait_for_updates(process, out, 5)
    process.send_signal(stop)
    _, err = process.communicate(timeout=120)
    clear_error(
        subprocess.CompletedProcess([], process.returncode, "", err), 130, "continue it with --resume"
    )
    saved = torch.load(out / "last.pt", weights_only=False)["train_state"]
    # nothing lost
    assert saved["step"] == _updates(out) >= 5 and f"after update {saved['step']} in" in err, err
    more = ["--resume", "--epochs", str(saved["epoch"] + 1)]
    resumed = cli(
        "train", "multi30k", "--data-dir", str(data), "--out", str(out), *more, capture_output=True, text=True
    )
    assert resumed.returncode == 0 and f"update {saved['step']}, to" in resumed.stdout, resumed.stderr


def test_a_run_stopped_before_any_update_starts_again_as_it_was_given(run: Path, tmp_path: Path):
    "Leftover metrics of a run that saved no checkpoint do not block the same command (on e80b885: only --start-over)."
    out = tmp_path / "run"
    out.mkdir()
    (out / "metrics.jsonl").write_text('{"kind": "update", "step": 1, "epoch": 0}\n')
    result = cli(
        *train_args(run.parent / "data", out, *TINY),
        capture_output=True,
    )
    assert result.returncode == 0, result.stderr
    resumed = cli(
        "train", "multi30k", "--out", str(tmp_path / "none"), "--resume", capture_output=True, text=True
    )
    clear_error(resumed, 2, "Nothing to resume", "Leave out --resume")


def test_deleting_the_tensorboard_folder_does_not_stop_training(run: Path, tmp_path: Path):
    "The folder is made again and the run goes on (on e80b885: a traceback in TensorBoard's thread, the run lost)."
    out = tmp_path / "run"
    process = _start_training(out, run.parent / "data")
    _wait_for_updates(process, out, 3)
    shutil.rmtree(out / "tensorboard")
    updates = _updates(out)
    _wait_for_updates(process, out, updates + 10)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    clear_error(subprocess.CompletedProcess([], process.returncode, "", err), 130, "the run is saved")
    assert (out / "tensorboard").is_dir()


def test_an_interrupted_translation_keeps_the_lines_it_wrote(run: Path, tmp_path: Path):
    "Ctrl-C to `translate`: the translations written so far stay, and the message says how many lines they are."
    (tmp_path / "input.txt").write_bytes(SENTENCES * 20)  # 6,000 lines
    command = ["translate", "--model", str(run / "last.pt"), "--beam", "1"]
    with open(tmp_path / "input.txt", "rb") as stdin:
        process = subprocess.Popen(
            [sys.executable, "-m", "annotated_transformer.cli", *command],
            cwd=ROOT,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_interruptible,
        )
        first = process.stdout.readline()  # the first chunk is written
        process.send_signal(signal.SIGINT)
        # (the file objects: they hold what readline read)
        rest, err = process.stdout.read(), process.stderr.read()
        process.wait(timeout=60)
    written = len((first + rest).splitlines())
    clear_error(subprocess.CompletedProcess([], process.returncode, "", err), 130)
    assert f"the first {written} input lines are translated and written" in err and 0 < written < 6000, err


def _without(model_dir: Path, key: str):
    "A config.json without `key` and, as version 0.4 wrote them, without a checksum."
    config = json.loads((model_dir / "config.json").read_text())
    del config[key], config["sha256"]
    (model_dir / "config.json").write_text(json.dumps(config))


def test_an_opened_directory_parses_its_description_once_and_each_line_is_tokenized_once(model_dir: Path):
    """`open_translator(DIR)` reads config.json once, and `translate_stream` tokenizes each line once (before, its
    description was parsed three times, by the format's guess and twice by its reader, and each line twice: for the
    length check, then to translate)."""
    read = model_directory.read_model_json
    parsed = []

    def counted(folder, name, *args, **kwargs):
        parsed.append(name)
        return read(folder, name, *args, **kwargs)

    with patch.object(model_directory, "read_model_json", counted):
        translator = open_translator(model_dir)
    assert parsed.count("config.json") == 1, parsed
    tokenize_all = translator.src_tok.tokenize_all
    tokenized = []

    def counted_lines(texts: list[str]) -> list[list[str]]:
        tokenized.extend(texts)
        return tokenize_all(texts)

    translator.src_tok.tokenize_all = counted_lines
    lines = [f"Ein Hund läuft {i}." for i in range(3)]
    out = io.StringIO()
    assert translate_stream(translator, io.BytesIO("".join(f"{s}\n" for s in lines).encode()), out) == 0
    assert len(out.getvalue().splitlines()) == 3 and sorted(tokenized) == lines, tokenized


def test_a_model_directory_without_vocabularies_says_so(model_dir: Path, tmp_path: Path):
    damaged = _copy(model_dir, tmp_path)
    _without(damaged, "vocabs")
    result = cli("translate", "--model", str(damaged), input=b"Ein Hund.\n", capture_output=True)
    clear_error(result, 2, "config.json lacks vocabs")


def _resigned(directory: Path, change, name: str = "config.json"):
    "Change a description as a download could: its checksum made to match, so that only the checks of each value stand."
    config = json.loads((directory / name).read_text())
    change(config)
    config["sha256"] = description_sha256(config)
    (directory / name).write_text(json.dumps(config))


def _setting(key: str, value):
    return lambda config: config["model"].__setitem__(key, value)


def _settings(**values):
    return lambda config: config["model"].update(values)


@pytest.mark.parametrize(
    "change, phrase",
    [
        (_setting("max_len", -1), "holds max_len = -1, which no model has"),
        (_setting("h", 0), "holds h = 0"),
        (_setting("src_vocab", -5), "holds src_vocab = -5"),
        (_setting("N", True), "holds N = True"),
        (_setting("d_k", 0), "holds d_k = 0"),
        (_setting("dropout", float("nan")), "holds dropout = nan"),
        (_setting("N", 10**6), "holds N = 1000000 layers but"),
        # one shared vocabulary
        (_settings(src_vocab=2**62, tgt_vocab=2**62), "holds a model too large to build"),
        (_setting("src_vocab", 2**62), "share_embeddings needs one vocabulary for both sides"),
        pytest.param(
            _setting("max_len", 10**12),
            "GiB, more than this machine's",
            marks=pytest.mark.skipif(
                not hasattr(os, "sysconf"), reason="the machine's memory from os.sysconf"
            ),
        ),
        (lambda config: config.__setitem__("vocabulary", "chars"), "a vocabulary or provenance of no kind"),
        (
            lambda config: config.__setitem__("tied", ["x"]),
            "ties weights that model.safetensors does not hold",
        ),
        (
            lambda config: config.__setitem__("files", {"../mine.txt": "0" * 64}),
            "'../mine.txt' that is not a plain",
        ),
    ],
)
def test_every_value_of_a_model_directory_is_checked(model_dir: Path, tmp_path: Path, change, phrase: str):
    """A configuration changed as a download could change it, checksum and all: one line each (on 0.10.3 a negative
    max_len or vocabulary and h = 0 were tracebacks, N = 10^6 built until killed, N = true and d_k = 0 translated)."""
    damaged = _copy(model_dir, tmp_path)
    _resigned(damaged, change)
    clear_error(
        cli("translate", "--model", str(damaged), input=b"Ein Hund.\n", capture_output=True), 2, phrase
    )


def _fifo(path: Path):
    path.unlink()
    os.mkfifo(path)


def _linked_out(path: Path):
    "`path` made a link to a copy of itself outside its directory: the same bytes, read from elsewhere."
    outside = path.parent.parent / f"outside-{path.name}"
    shutil.copy(path, outside)
    path.unlink()
    path.symlink_to(outside)


def _overflowing_header(directory: Path):
    "A safetensors header whose first shape overflows, with the checksums made to match."
    weights = directory / "model.safetensors"
    raw = weights.read_bytes()
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + size])
    header[next(k for k in header if k != "__metadata__")]["shape"] = [2**62, 2**62]
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    weights.write_bytes(len(text).to_bytes(8, "little") + text + raw[8 + size :])
    _resigned(directory, lambda config: config.__setitem__("weights_sha256", digest(weights)))


@pytest.mark.parametrize(
    "damage, phrase",
    [
        (
            lambda d: ((d / "config.json").unlink(), (d / "config.json").symlink_to("/dev/zero")),
            "a link to /dev/zero",
        ),
        (lambda d: _fifo(d / "config.json"), "config.json is neither a file nor a folder"),
        (lambda d: _linked_out(d / "model.safetensors"), "outside the directory"),
        (lambda d: (d / "config.json").write_text("[" * 100_000 + "]" * 100_000), "nests its JSON deeper"),
        (lambda d: (d / "config.json").write_bytes(b"{" + b" " * (64 << 20)), "config.json is over 64 MB"),
        (_overflowing_header, "model.safetensors cannot be read"),
        (lambda d: (d / "loop").symlink_to("loop"), "loop is a link that leads back to itself"),
    ],
)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes and links as on Linux and macOS")
def test_a_model_directory_is_read_only_within_itself_and_within_bounds(
    model_dir: Path, tmp_path: Path, damage, phrase: str
):
    """Files that would read forever, read the user's files, or overflow: one line each, at once (on 0.10.3 a pipe
    never ended, a link to /dev/zero ran out of memory, a link out was read, deep JSON and the header were tracebacks)."""
    damaged = _copy(model_dir, tmp_path)
    damage(damaged)
    clear_error(
        cli("translate", "--model", str(damaged), input=b"Ein Hund.\n", capture_output=True), 2, phrase
    )


def _external_data_outside(directory: Path):
    "The encoder's weights moved to a file beside the directory that its graph names as '../weights.data'."
    import onnx
    from onnx.external_data_helper import convert_model_to_external_data

    graph = onnx.load(directory / "encoder.onnx")
    # (onnx refuses to write '..')
    convert_model_to_external_data(graph, location="weights.data", size_threshold=0)
    onnx.save_model(graph, directory / "encoder.onnx")
    (directory / "weights.data").rename(directory.parent / "weights.data")
    graph = onnx.load(directory / "encoder.onnx", load_external_data=False)
    for entry in (
        e for tensor in graph.graph.initializer for e in tensor.external_data if e.key == "location"
    ):
        entry.value = "../weights.data"
    onnx.save_model(graph, directory / "encoder.onnx")
    checksum = digest(directory / "encoder.onnx")
    _resigned(directory, lambda config: config["graphs"]["encoder.onnx"].__setitem__("sha256", checksum))


@pytest.mark.parametrize(
    "format, damage, phrase",
    [
        (
            "ctranslate2",
            lambda d: _resigned(
                d, lambda config: config["files"].pop("model.bin"), "annotated_transformer.json"
            ),
            "lists no checksum of model.bin",
        ),
        ("ctranslate2", lambda d: _linked_out(d / "README.md"), "README.md is a link to"),
        (
            "ctranslate2",
            lambda d: _resigned(
                d, lambda config: config.__setitem__("langs", ["de"]), "annotated_transformer.json"
            ),
            "languages or vocabularies of the wrong kinds",
        ),
        ("onnx", _external_data_outside, "holds a graph that onnxruntime refuses"),
        (
            "onnx",
            lambda d: _resigned(d, lambda config: config.__setitem__("positions", 10**12)),
            "positions = 10",
        ),
    ],
)
def test_every_format_reads_only_what_its_description_vouches_for(
    run: Path, tmp_path: Path, format: str, damage, phrase: str
):
    """An unlisted weights file, a link out that the engine could follow, a graph's data outside its folder, a table
    of a trillion positions: one line each (on 0.14.0 the first two translated, the graph was a traceback)."""
    out = tmp_path / "model" / format
    assert cli("export", str(run), "--out", str(out), "--format", format, capture_output=True).returncode == 0
    damage(out)
    clear_error(cli("translate", "--model", str(out), input=b"Ein Hund.\n", capture_output=True), 2, phrase)


def _stored_search(directory: Path, description: str, **settings):
    "generation_config.json changed as a download could change it, its checksum in the description made to match."
    search = directory / "generation_config.json"
    search.write_text(json.dumps(json.loads(search.read_text()) | settings))
    _resigned(directory, lambda config: config["files"].__setitem__(search.name, digest(search)), description)


@pytest.mark.parametrize(
    "format, description",
    [("native", "config.json"), ("ctranslate2", "annotated_transformer.json"), ("onnx", "config.json")],
)
def test_a_stored_search_is_checked_against_its_model(
    run: Path, tmp_path: Path, format: str, description: str
):
    """A stored beam of a million, or outputs a million tokens past their source: refused when the model opens, in
    every format (on 0.19.1, memory ran out in each engine, or an output ran past the positions' table)."""
    exported = tmp_path / format
    assert (
        cli("export", str(run), "--out", str(exported), "--format", format, capture_output=True).returncode
        == 0
    )
    for setting, phrase in [
        (dict(num_beams=10**6), "a beam of 1,000,000 needs a vocabulary of at least 2,000,000 tokens"),
        (
            dict(max_new_tokens_past_source=10**6),
            "outputs that grow 1,000,000 tokens past their source need more",
        ),
    ]:
        altered = Path(shutil.copytree(exported, tmp_path / "altered", dirs_exist_ok=True))
        _stored_search(altered, description, **setting)
        result = cli(
            "translate", "--model", str(altered), input=b"Ein Hund.\n", capture_output=True, text=True
        )
        clear_error(result, 2, "stores a search its model cannot run", phrase)


def test_export_refuses_a_stored_search_its_model_cannot_run(run: Path, tmp_path: Path):
    "A checkpoint whose search holds a million beams (its checksum made to match): export refuses it, writing nothing."
    contents = read_checkpoint(run / "last.pt")  # its checksum taken off, and written anew below
    write_checkpoint(tmp_path / "wide.pt", contents | dict(search=contents["search"] | dict(num_beams=10**6)))
    result = cli(
        "export", str(tmp_path / "wide.pt"), "--out", str(tmp_path / "model"), capture_output=True, text=True
    )
    clear_error(result, 2, "wide.pt stores a search its model cannot run: a beam of 1,000,000")
    assert not (tmp_path / "model").exists()


def test_a_directory_rewritten_while_it_opens_is_one_line(run: Path, tmp_path: Path, monkeypatch):
    """An export replaces a CTranslate2 directory between the checks of its files and CTranslate2's load (found by
    translating in a loop while two formats were exported into one directory, 1 time in 14): one line that says to run
    again, where it was a RuntimeError's traceback."""
    out = tmp_path / "model"
    assert (
        cli("export", str(run), "--out", str(out), "--format", "ctranslate2", capture_output=True).returncode
        == 0
    )
    checked = ctranslate2_format.read_description

    def then_rewritten(*args, **kwargs):
        description = checked(*args, **kwargs)
        (out / "model.bin").unlink()  # as the next export's move deletes it
        return description

    monkeypatch.setattr(ctranslate2_format, "read_description", then_rewritten)
    result = cli("translate", "--model", str(out), input=b"Ein Hund.\n", capture_output=True, text=True)
    clear_error(result, 2, "CTranslate2 could not load", "run again once it ends")


def test_export_deletes_only_the_files_an_export_wrote(run: Path, tmp_path: Path):
    """A description that lists the user's own files (one in the folder, one beside it): an export over it deletes
    neither (on 0.10.3 the user's mine.txt went, since it was listed)."""
    out = tmp_path / "model"
    assert (
        cli("export", str(run), "--out", str(out), "--format", "ctranslate2", capture_output=True).returncode
        == 0
    )
    (out / "mine.txt").write_text("mine")
    (tmp_path / "beside.txt").write_text("mine too")
    listed = {"mine.txt": "0" * 64, "../beside.txt": digest(tmp_path / "beside.txt")}
    _resigned(out, lambda config: config["files"].update(listed), "annotated_transformer.json")
    assert cli("export", str(run), "--out", str(out), capture_output=True).returncode == 0
    assert (out / "mine.txt").read_text() == "mine" and (tmp_path / "beside.txt").read_text() == "mine too"
    assert not (out / "model.bin").exists()  # what the earlier export wrote went


def test_scoring_empty_files_says_there_is_nothing_to_score(run: Path, tmp_path: Path):
    (tmp_path / "empty.de").write_text("")
    (tmp_path / "empty.en").write_text("")
    files = ["--source", str(tmp_path / "empty.de"), "--reference", str(tmp_path / "empty.en")]
    result = cli("evaluate", "--model", str(run / "last.pt"), "--beam", "1", *files, capture_output=True)
    clear_error(result, 2, "holds no sentence pairs")


@pytest.mark.parametrize(
    "env, phrase",
    [
        ({"ANNOTATED_TRANSFORMER_CACHE": "{file}/cache"}, "ANNOTATED_TRANSFORMER_CACHE"),
        ({"MULTI30K_DIR": "{file}"}, "is not a directory"),
    ],
)
def test_a_data_path_that_names_a_file_says_which_setting(tmp_path: Path, env: dict, phrase: str):
    "A cache or data directory that is a regular file: one line naming the setting to change (not a bare [Errno 20])."
    (tmp_path / "file").write_text("not a directory")
    settings = {"MULTI30K_DIR": "", "MULTI30K_URL": "http://127.0.0.1:9/"} | {
        k: v.format(file=tmp_path / "file") for k, v in env.items()
    }
    environment = {k: v for k, v in {**os.environ, **settings}.items() if v}
    result = cli(
        "train", "multi30k", "--out", str(tmp_path / "run"), *TINY, capture_output=True, env=environment
    )
    clear_error(result, 2, phrase)


@pytest.mark.parametrize(
    "files, phrases",
    [
        (
            {"one.tsv": b"Ein Hund.\tA dog.\n"},
            ["Cannot hold out 0 of 1 pair(s)", "more than one pair to train on"],
        ),
        ({"copies.tsv": b"Ein Hund.\tA dog.\n" * 30}, ["Each of the 30 pairs is a copy", "(1 different)"]),
        (
            {"mac.de": b"Ein Hund.\rEine Katze.\r", "mac.en": b"A dog.\rA cat.\r"},
            ["line 1 holds a carriage return", "convert the line ends to newlines"],
        ),
        (
            {"utf16.de": "Ein Hund.\nEine Katze.\n".encode("utf-16-le"), "utf16.en": b"A dog.\nA cat.\n"},
            ["utf16.de is UTF-16LE text, not UTF-8", "iconv -f UTF-16LE -t UTF-8"],
        ),
        ({"nul.tsv": b"Ein Hund.\tA dog.\nEine\x00 Katze.\tA cat.\n"}, ["nul.tsv, line 2: a NUL byte"]),
    ],
)
def test_a_corpus_that_cannot_train_says_why(tmp_path: Path, files: dict[str, bytes], phrases: list[str]):
    """One pair, thirty copies of one pair, lines ended by carriage returns alone, UTF-16 without a byte-order mark, a
    NUL byte: each named as it is, and no run directory made (on 2660d33: "a --val-size from 1 to 0" for the first
    and the third, "its files are empty" for the copies, an --out holding .lock; UTF-16 and NUL bytes trained)."""
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    given = ["--train", *(str(tmp_path / name) for name in files), "--src-lang", "de", "--tgt-lang", "en"]
    result = cli(
        "train", "corpus", *given, "--out", str(tmp_path / "run"), *TINY, capture_output=True, text=True
    )
    clear_error(result, 2, *phrases)
    # refused: no directory left behind (on 2660d33, one holding .lock)
    assert not (tmp_path / "run").exists()


def test_a_validation_set_that_is_the_training_set_is_refused(tmp_path: Path):
    "`--val` given the training files: nothing would be left to train on that validation does not score (0.10.3 trained)."
    (tmp_path / "tr.tsv").write_bytes(b"Ein Hund.\tA dog.\nEine Katze.\tA cat.\n")
    files = [
        "--train",
        str(tmp_path / "tr.tsv"),
        "--val",
        str(tmp_path / "tr.tsv"),
        "--src-lang",
        "de",
        "--tgt-lang",
        "en",
    ]
    result = cli(
        "train", "corpus", *files, "--out", str(tmp_path / "run"), *TINY, capture_output=True, text=True
    )
    clear_error(result, 2, "Each of the 2 training pairs is also a validation pair")
    assert not (tmp_path / "run").exists()


TERMINATED_AFTER_THE_FIRST_GRAPH = """
import functools, os, signal, torch.onnx

@functools.wraps(torch.onnx.export)  # its signature too, which the package reads
def export_then_terminated(*args, export=torch.onnx.export, **kwargs):
    export(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGTERM)  # a scheduler's SIGTERM, once the first graph is written
torch.onnx.export = export_then_terminated
"""


def test_an_interrupted_export_leaves_nothing_and_runs_again(run: Path, tmp_path: Path):
    """SIGTERM while `export --format onnx` writes its graphs: no directory is left, and the same command then works
    (on 2660d33 it left encoder.onnx alone in --out, and the rerun refused the directory as the user's)."""
    out, export = tmp_path / "web", ["export", str(run), "--format", "onnx"]
    command = [*with_fault(TERMINATED_AFTER_THE_FIRST_GRAPH), *export, "--out", str(out)]
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    _, err = process.communicate(timeout=120)
    clear_error(subprocess.CompletedProcess([], process.returncode, "", err), 130)
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())  # neither --out nor the half-written one
    assert (
        cli(*export, "--out", str(out), capture_output=True).returncode == 0
        and (out / "decoder.onnx").is_file()
    )


@pytest.mark.parametrize(
    "first, second", [("native", "onnx"), ("onnx", "ctranslate2"), ("ctranslate2", "native")]
)
def test_an_export_over_an_earlier_one_replaces_its_files_only(
    run: Path, tmp_path: Path, first: str, second: str
):
    """Another format into the same directory: the earlier format's files go, the user's own stay (on 2660d33 the
    earlier ones stayed, and `translate` opened them; CTranslate2's converter deleted the user's)."""
    out = tmp_path / "model"
    assert cli("export", str(run), "--out", str(out), "--format", first, capture_output=True).returncode == 0
    (out / "notes.txt").write_text("mine")
    assert cli("export", str(run), "--out", str(out), "--format", second, capture_output=True).returncode == 0
    assert (out / "notes.txt").read_text() == "mine"
    alone = tmp_path / "alone"
    assert (
        cli("export", str(run), "--out", str(alone), "--format", second, capture_output=True).returncode == 0
    )
    assert sorted(p.name for p in out.iterdir()) == sorted([p.name for p in alone.iterdir()] + ["notes.txt"])
    translated = cli(
        "translate", "--model", str(out), "--beam", "1", input=b"Ein Hund.\n", capture_output=True
    )
    assert translated.returncode == 0 and translated.stdout.strip(), translated.stderr


def test_an_export_interrupted_while_its_files_move_moves_them_all(run: Path, tmp_path: Path, monkeypatch):
    """Ctrl-C as the first file of a native export lands in an ONNX export's directory: the move finishes first, then
    the command stops with its one line, leaving the new export whole and none of the old one's files (on 2660d33 the
    directory was left with one new file beside the old export, which no description covered)."""
    out = tmp_path / "model"
    assert cli("export", str(run), "--out", str(out), "--format", "onnx", capture_output=True).returncode == 0
    replace = os.replace

    def interrupted(source, target):
        replace(source, target)
        if Path(target).parent == out and not interrupted.done:
            interrupted.done = True
            signal.raise_signal(signal.SIGINT)  # Ctrl-C, as the first file lands

    interrupted.done = False
    monkeypatch.setattr(os, "replace", interrupted)
    # as at a terminal (a test worker may ignore it)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        clear_error(
            cli("export", str(run), "--out", str(out), capture_output=True, text=True), 130, "interrupted"
        )
    finally:
        signal.signal(signal.SIGINT, handler)
        monkeypatch.undo()
    alone = tmp_path / "alone"
    assert cli("export", str(run), "--out", str(alone), capture_output=True).returncode == 0
    assert interrupted.done and sorted(p.name for p in out.iterdir()) == sorted(
        p.name for p in alone.iterdir()
    )
    translated = cli(
        "translate", "--model", str(out), "--beam", "1", input=b"Ein Hund.\n", capture_output=True
    )
    assert translated.returncode == 0 and translated.stdout.strip(), translated.stderr


def _fake_japanese(sentence: str) -> str:
    "A made-up target language written as Japanese is, without spaces: two kana a word, a full stop at the end."
    kana = "あいうえおかきくけこさしすせそたちつてとなにぬねの"
    return (
        "".join(kana[sum(map(ord, w)) % len(kana)] + kana[len(w) % len(kana)] for w in sentence.split())
        + "。"
    )


def test_a_model_into_japanese_is_scored_by_characters(tmp_path: Path):
    """BLEU of a target written without spaces counts characters (13a would count a sentence as one word), and scoring
    it needs no spaCy tokenizer for Japanese, which training it with BPE did not (on f908e24: an ImportError's
    traceback); Multi30k holds no Japanese, and `evaluate` says so instead of asking for Multi30k's files."""
    for split, n in (("train", 600), ("test", 20)):
        english = first_lines(split, "en", n)
        (tmp_path / f"{split}.en").write_text("\n".join(english) + "\n", encoding="utf-8")
        (tmp_path / f"{split}.ja").write_text(
            "\n".join(map(_fake_japanese, english)) + "\n", encoding="utf-8"
        )
    train = [
        "--train",
        str(tmp_path / "train.en"),
        str(tmp_path / "train.ja"),
        "--vocabulary",
        "bpe",
        "--bpe-size",
        "500",
    ]
    trained = cli(
        "train", "corpus", "--out", str(tmp_path / "run"), *TINY, *train, capture_output=True, text=True
    )
    assert trained.returncode == 0, trained.stderr
    model = ["evaluate", "--model", str(tmp_path / "run" / "last.pt"), "--beam", "1"]
    clear_error(cli(*model, capture_output=True, text=True), 2, "multi30k holds de and en text", "--source")
    test = ["--source", str(tmp_path / "test.en"), "--reference", str(tmp_path / "test.ja")]
    scored = cli(*model, *test, capture_output=True, text=True)
    assert scored.returncode == 0 and "tok:char" in scored.stdout, scored.stderr
    assert "tokenized, lowercased" not in scored.stdout, scored.stdout
    exported = [
        "export",
        str(tmp_path / "run"),
        "--out",
        str(tmp_path / "model"),
        "--score",
        "--beam",
        "1",
        *test,
    ]
    # export --score too (on f908e24 the same ImportError)
    assert cli(*exported, capture_output=True).returncode == 0
    assert "tok:char" in (tmp_path / "model" / "README.md").read_text(encoding="utf-8")


def test_an_onnx_export_the_page_cannot_detokenize_is_refused(tmp_path: Path):
    """A model into French exported for the browser, whose detokenizer lacks Moses' own rules for French: refused,
    naming the languages it lacks, and nothing written (on 2660d33 it was written, and the page failed on first use)."""
    # German named French: only the languages the names give matter
    for lang, text in (("en", "en"), ("fr", "de")):
        (tmp_path / f"train.{lang}").write_text(
            "".join(s + "\n" for s in first_lines("train", text, 300)), "utf-8"
        )
    files = [str(tmp_path / "train.en"), str(tmp_path / "train.fr")]
    words = ["--vocabulary", "words"]  # a BPE's text comes back by its own rules, in any language
    trained = cli(
        "train",
        "corpus",
        "--train",
        *files,
        "--out",
        str(tmp_path / "run"),
        *TINY,
        *words,
        capture_output=True,
    )
    assert trained.returncode == 0, trained.stderr
    export = ["export", str(tmp_path / "run"), "--format", "onnx", "--out", str(tmp_path / "web")]
    clear_error(
        cli(*export, capture_output=True, text=True), 2, "cannot detokenize fr", "but cs, fi, fr, ga, it"
    )
    assert not (tmp_path / "web").exists()


def test_a_bug_shows_its_traceback(monkeypatch):
    """An error that is not the user's (a ZeroDivisionError put into the command `main` runs) is its traceback, a line
    saying it is a bug and where to report it, and status 1: never one line that reads as the user's mistake."""
    monkeypatch.setattr("annotated_transformer.cli.run", lambda args: 1 / 0)
    result = cli("translate", "--checkpoint", "no/such/checkpoint.pt", capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    assert "Traceback" in result.stderr and "ZeroDivisionError: division by zero" in result.stderr, (
        result.stderr
    )
    assert "this is a bug" in result.stderr and "/issues" in result.stderr, result.stderr


@pytest.fixture
def small_disk(tmp_path: Path):
    """A real file system of 8 MB (tmpfs) for the writes below to fill: a full disk as users meet it, where a limit on
    file sizes (`_file_size_limit`) gives a clean error that a real disk does not. Mounting needs root, or sudo."""
    disk = tmp_path / "disk"
    disk.mkdir()
    options = f"size=8m,uid={os.getuid()},gid={os.getgid()},mode=0700"
    mount = ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(disk)]
    as_root = [] if os.geteuid() == 0 else ["sudo", "-n"]
    if not shutil.which(mount[0]) or subprocess.run([*as_root, *mount], capture_output=True).returncode:
        pytest.skip("mounting a small tmpfs needs Linux and root (or sudo without a password)")
    yield disk
    subprocess.run([*as_root, "umount", "--lazy", str(disk)], check=True)


def _fill(disk: Path, leave: int):
    "Fill `disk` until about `leave` bytes are free."
    (disk / "filler").write_bytes(bytes(max(shutil.disk_usage(disk).free - leave, 0)))


def _left_behind(disk: Path) -> list[str]:
    "What a failed write left on `disk` besides the filler and what the test put there: temporary files and folders."
    return [p.name for p in disk.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".export-")]


WRITERS = ["train", "resume", "average", "evaluate", "prepare"]
# the run's BPE: all four
WRITERS += [f"export {form}" for form in ("native", "ctranslate2", "onnx", "transformers")]


@pytest.mark.parametrize(  # a full disk, and room for a start that the write then outgrows
    "command, leave",
    [(c, 0) for c in WRITERS] + [(c, 100_000) for c in ("train", "average", "export native")],
)
def test_every_writer_on_a_full_disk_says_so_and_keeps_what_was_there(
    run: Path, small_disk: Path, monkeypatch, command: str, leave: int
):
    """Each command that writes, on a real full file system: one line that says the disk may be full, the files that
    were there as they were, no temporary file left (on 0.19.1 train and average ended in PyTorch's `unexpected pos`,
    the exports in safetensors' error or an errno without a path)."""
    data = str(run.parent / "data")
    if command == "resume":
        shutil.copytree(run, small_disk / "run", ignore=shutil.ignore_patterns("tensorboard"))
        before = digests(small_disk / "run")
    _fill(small_disk, leave)
    args = {
        "train": train_args(data, small_disk / "run", *TINY),
        "resume": train_args(data, small_disk / "run", "--resume", "--epochs", "2", "--no-progress"),
        "average": [
            "average",
            str(run / "last.pt"),
            str(run / "epoch_01.pt"),
            "--out",
            str(small_disk / "avg.pt"),
        ],
        "evaluate": [
            "evaluate",
            "--checkpoint",
            str(run / "last.pt"),
            "--data-dir",
            data,
            "--beam",
            "1",
            "--hypotheses",
            str(small_disk / "h.txt"),
        ],
        "prepare": ["prepare", "multi30k", "--data-dir", data, "--bpe-size", "800"],  # as TINY's
    }.get(command) or ["export", str(run), "--out", str(small_disk / "model"), "--format", command.split()[1]]
    if command == "prepare":  # into a cache on the full disk (the others reuse the one the run prepared)
        monkeypatch.setenv("ANNOTATED_TRANSFORMER_CACHE", str(small_disk / "cache"))
    # a thread's traceback shows
    alone = dict(stdin=subprocess.DEVNULL) if command in ("train", "resume") else {}
    result = cli(*args, capture_output=True, text=True, **alone)
    if command == "evaluate":  # its progress bar, above the line
        result.stderr = "".join(line for line in result.stderr.splitlines(True) if "batch/s]" not in line)
    clear_error(result, 2, "No space left on device")
    assert _left_behind(small_disk) == []
    if command == "resume":
        assert digests(small_disk / "run") == before


def test_translate_onto_a_real_full_disk_keeps_whole_lines(run: Path, small_disk: Path):
    "`translate > full/out.txt`: it says how many lines are whole, and they are (on 0.19.1 a torn line, no count)."
    _fill(small_disk, 8192)  # two pages
    with open(small_disk / "out.txt", "w") as out:
        result = cli(
            "translate",
            "--checkpoint",
            str(run / "last.pt"),
            "--beam",
            "1",
            input=SENTENCES,
            stdout=out,
            stderr=subprocess.PIPE,
        )
    clear_error(
        result, 2, "Could not write the translations to standard output", "is the disk full? Its first"
    )
    said = result.stderr.decode()
    whole = int(said.split("Its first ")[1].split(" lines")[0].replace(",", ""))
    lines = (small_disk / "out.txt").read_text().split("\n")
    # a last line may be torn
    assert 0 < whole < 300 and len(lines) in (whole + 1, whole + 2), (whole, len(lines))
    assert f"from input line {whole + 1}." in said
