"""The command line as a user runs it: each command in its own process, on the tests' own German–English corpus
(`corpora.py`) laid out as Multi30k's files, so that they run on any clone.

A tiny model (one layer, width 32) trains on the corpus's training split for two epochs, is interrupted and
resumed, and its checkpoint is used by `translate` and `evaluate`. The same commands then run the WMT 2014
recipe on the corpus under WMT's file names, and a user's own corpus, English→German, given as files and as
a tab-separated file. The tests check the plumbing, not the quality (the Multi30k notebook measures that)."""

import errno
import gzip
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from unittest.mock import patch

import pytest
import torch
from corpora import first_lines, write_corpus, write_wmt14_stand_in
from faults import KILLED_AFTER_FIRST_CHECKPOINT, NEVER_ENCODES, with_fault

from annotated_transformer.cli import main
from annotated_transformer.data import find_corpus_file, read_lines
from annotated_transformer.errors import ISSUES, WaitTimeoutError
from annotated_transformer.runs import hold_run_dir
from annotated_transformer.saving import one_writer_at_a_time

pytestmark = pytest.mark.xdist_group("test_cli")  # its module-scoped fixtures are built once, on one worker

ROOT = Path(__file__).resolve().parent.parent
TINY = "--N 1 --d-model 32 --d-ff 64 --h 2 --bpe-size 800 --max-tokens 1000 --warmup 50 --factor 1.0 --no-progress".split()


def cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    "Run `python -m annotated_transformer.cli ARGS`; fail with its output if it fails."
    result = subprocess.run(
        [sys.executable, "-m", "annotated_transformer.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        **kwargs,
    )
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


def train_state(checkpoint: Path) -> dict:
    return torch.load(checkpoint, weights_only=True)["train_state"]


def test_console_script_help(capsys, monkeypatch):
    """The installed `annotated-transformer` script exists and its help lists the commands; each command's help works
    (through `cli.main`, in this process: the script's own start is checked once)."""
    # argparse wraps its help to the terminal's width, here and in the script
    monkeypatch.setenv("COLUMNS", "80")
    script = Path(sys.executable).parent / "annotated-transformer"
    top = subprocess.run([script, "--help"], capture_output=True, text=True, check=True).stdout

    def help_of(*command: str) -> str:
        with pytest.raises(SystemExit) as stopped:
            main([*command, "--help"])
        assert stopped.value.code == 0
        return capsys.readouterr().out

    commands = ("train", "translate", "evaluate", "average", "export")
    assert all(command in top for command in commands) and top == help_of()
    for command in (*commands, "train copy", "train wmt14"):
        assert help_of(*command.split()).startswith(f"usage: annotated-transformer {command}")
    assert "--resume" in help_of("train", "multi30k")
    assert "the model and its search:\n  --model MODEL, --checkpoint MODEL" in help_of("translate")


def test_errors_are_one_line_with_status_2(tmp_path: Path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "annotated_transformer.cli",
            "evaluate",
            "--checkpoint",
            str(tmp_path / "none.pt"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert (
        result.stderr.startswith("annotated-transformer: error: No checkpoint at")
        and "Traceback" not in result.stderr
    )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    "The tests' German–English corpus, all of it, as Multi30k's files (plain text, which no checksum covers)."
    return write_corpus(tmp_path_factory.mktemp("corpus"), train=13_112, test=500)


@pytest.fixture(scope="module")
def interrupted_and_resumed(tmp_path_factory, corpus: Path) -> Path:
    "A 2-epoch tiny run, killed after its first mid-epoch checkpoint, then resumed to the end."
    out = tmp_path_factory.mktemp("run")
    args = ["train", "multi30k", "--data-dir", str(corpus), "--out", str(out), "--epochs", "2", *TINY]
    killed = subprocess.run(
        [*with_fault(KILLED_AFTER_FIRST_CHECKPOINT), *args], capture_output=True, cwd=ROOT, timeout=600
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    killed_at = train_state(out / "last.pt")
    assert killed_at["epoch"] == 0 and killed_at["step"] == 100, killed_at  # the first checkpoint, mid-epoch
    refused = subprocess.run(
        [sys.executable, "-m", "annotated_transformer.cli", *args], capture_output=True, text=True, cwd=ROOT
    )
    assert refused.returncode == 2 and "already holds a run" in refused.stderr
    log = cli(*args, "--resume").stdout
    assert "from epoch 0, update 100, to 2 epochs" in log and "epoch   2" in log
    return out


def test_resume_continues_where_the_run_stopped(interrupted_and_resumed: Path):
    state = train_state(interrupted_and_resumed / "last.pt")
    steps = [r["step"] for r in state["records"]]
    assert steps == list(range(1, len(steps) + 1))  # every update once: none lost, none repeated
    assert state["epoch"] == 2 and [e["epoch"] for e in state["evals"]] == [1, 2]
    assert state["records"][99]["epoch"] == 0 and state["records"][-1]["epoch"] == 1
    assert sorted(p.name for p in interrupted_and_resumed.glob("epoch_*.pt")) == [
        "epoch_01.pt",
        "epoch_02.pt",
    ]


def one_line(capsys, argv: list[str], expected: str):
    "`argv` through the command line, in this process: status 2 and one line on stderr that says `expected`."
    status, said = main(argv), capsys.readouterr().err  # a progress bar's lines, then the error's
    error = said.splitlines()[-1]
    assert status == 2 and error.startswith("annotated-transformer: error: ") and expected in error, (
        status,
        said,
    )
    assert "Traceback" not in said and said.count("error: ") == 1, said


def test_each_kind_of_user_error_is_one_line(interrupted_and_resumed, corpus, tmp_path, monkeypatch, capsys):
    "Every kind of `AnnotatedTransformerError`, each from a command, where it can be by what a user would do."
    model, source, reference = (
        str(interrupted_and_resumed / "epoch_02.pt"),
        tmp_path / "src.de",
        tmp_path / "ref.en",
    )
    source.write_text("Ein Hund läuft.\nZwei Katzen.\n", encoding="utf-8")
    reference.write_text("A dog runs.\nTwo cats.\n", encoding="utf-8")
    own = ["--source", str(source), "--reference", str(reference)]
    (tmp_path / "short.en").write_text("A dog runs.\n", encoding="utf-8")
    (tmp_path / "garbage.pt").write_bytes(b"not a checkpoint")
    evaluate = ["evaluate", "--checkpoint", model, "--beam", "1"]
    one_line(capsys, [*evaluate, *own, "--split", "val"], "Score either a split")  # InputError
    one_line(
        capsys, [*evaluate, "--source", str(source), "--reference", str(tmp_path / "short.en")], "line"
    )  # DataError
    one_line(
        capsys,
        ["evaluate", "--checkpoint", str(tmp_path / "garbage.pt"), *own],
        "Could not read the checkpoint",
    )
    # MissingFile
    one_line(capsys, ["evaluate", "--checkpoint", str(tmp_path / "none.pt"), *own], "No checkpoint at")
    train = ["train", "multi30k", "--data-dir", str(corpus), "--out", str(interrupted_and_resumed), *TINY]
    one_line(capsys, train, "already holds a run")  # OutputInUseError
    with patch("os.replace", side_effect=OSError(errno.ENOSPC, "No space left on device")):  # a full disk
        # WriteError
        one_line(capsys, [*evaluate, *own, "--hypotheses", str(tmp_path / "h.txt")], "is the disk full")
    with monkeypatch.context() as env:  # no data given, no network: the download fails
        env.delenv("MULTI30K_DIR", raising=False)
        env.setenv("ANNOTATED_TRANSFORMER_CACHE", str(tmp_path / "cache"))
        env.setenv("MULTI30K_URL", (tmp_path / "nowhere").as_uri() + "/")
        one_line(capsys, [*evaluate, "--split", "val"], "Could not download")  # DownloadError
    gpu_full = torch.cuda.OutOfMemoryError(
        "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has 79 GiB in all"
    )
    with patch("annotated_transformer.translation.Translator.decode_batch", side_effect=gpu_full):
        one_line(
            capsys,
            [*evaluate, *own],
            "The GPU ran out (asked for 2.00 GiB): lower the beam (--beam), or run it on another device (--device)",
        )
    with patch.dict(sys.modules, {"ctranslate2": None}):  # not installed
        one_line(
            capsys,
            ["export", model, "--out", str(tmp_path / "ct2"), "--format", "ctranslate2"],
            "pip install",
        )
    hung = WaitTimeoutError("Process 1 waited 30 minutes for the others, and one did not answer.")
    # what a process of torchrun would meet
    with patch("annotated_transformer.runs.Trainer.fit", side_effect=hung):
        one_line(
            capsys,
            ["train", "multi30k", "--data-dir", str(corpus), "--out", str(tmp_path / "r"), *TINY],
            "waited",
        )


def test_a_bug_deep_inside_a_command_is_a_traceback(interrupted_and_resumed, tmp_path, capsys):
    "An error of ours, not the user's, raised deep inside `evaluate`: its traceback, where to report it, status 1."
    source = tmp_path / "src.tsv"
    source.write_text("Ein Hund läuft.\tA dog runs.\n", encoding="utf-8")
    with patch(
        "annotated_transformer.translation.Translator.decode_batch", side_effect=ZeroDivisionError("a bug")
    ):
        status = main(
            ["evaluate", "--checkpoint", str(interrupted_and_resumed / "last.pt"), "--source", str(source)]
        )
    said = capsys.readouterr().err
    assert (
        status == 1 and "Traceback (most recent call last):" in said and "ZeroDivisionError: a bug" in said
    ), said
    assert said.rstrip().endswith(
        "this is a bug, not a mistake in what you gave: please report it at " + ISSUES
    )


def test_a_budget_run_plans_its_end(tmp_path: Path, corpus: Path):
    "--schedule budget: the run says its plan, ends at an epoch's end with the rate fallen, and refuses to train at 0."
    args = [
        "train",
        "multi30k",
        "--data-dir",
        str(corpus),
        "--out",
        str(tmp_path),
        *TINY,
        "--schedule",
        "budget",
    ]
    log = cli(*args, "--minutes", "0.1").stdout
    assert "on cpu (" in log and "plan: " in log and " updates) at " in log, log
    saved = torch.load(tmp_path / "last.pt", weights_only=True)
    state, schedule = saved["train_state"], saved["scheduler"]
    rates = [r["lr"] for r in state["records"]]
    assert state["step"] == schedule["end"] and state["batch_in_epoch"] == 0  # the planned end: an epoch's
    assert rates[-1] < max(rates) / 50 and schedule["_last_lr"] == [0.0]
    refused = subprocess.run(
        [sys.executable, "-m", "annotated_transformer.cli", *args, "--resume", "--minutes", "5"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert refused.returncode == 2 and "brought the learning rate down to 0" in refused.stderr, refused.stderr


def test_translate_stdin_to_stdout(interrupted_and_resumed: Path):
    text = "Ein Mann fährt Fahrrad.\n\nZwei Hunde spielen im Schnee.\n"
    for search in ([], ["--beam", "1"], ["--int8"]):  # the default beam of 4, greedy decoding, 8-bit weights
        out = cli(
            "translate", "--checkpoint", str(interrupted_and_resumed / "last.pt"), *search, input=text
        ).stdout
        lines = out.split("\n")
        assert len(lines) == 4 and lines[1] == "" and lines[3] == ""  # three lines out, the empty one kept
        assert lines[0] and lines[2]


def test_average_chooses_on_validation(interrupted_and_resumed: Path, corpus: Path, tmp_path: Path):
    "Given a run, `average` scores last.pt and the mean of the snapshots on validation and writes the best to best.pt."
    run = tmp_path / "run"  # a copy: `export` would take best.pt for the run's model in the other tests
    run.mkdir()
    for name in ("last.pt", "epoch_01.pt", "epoch_02.pt"):
        (run / name).write_bytes((interrupted_and_resumed / name).read_bytes())
    out = cli("average", str(run), "--data-dir", str(corpus), "--beam", "1").stdout
    assert "sacreBLEU on val (greedy):" in out, out
    scores = {
        line.rsplit(None, 1)[0].split("  ")[0]: float(line.split()[-1]) for line in out.splitlines()[3:5]
    }
    chosen = out.split("chose ")[1].split(":")[0]
    assert list(scores) == ["last.pt", "mean of the last 2"] and scores[chosen] == max(scores.values()), out
    expected = ["last.pt"] if chosen == "last.pt" else ["epoch_01.pt", "epoch_02.pt"]
    saved = torch.load(run / "best.pt", weights_only=True)
    assert [Path(p).name for p in saved["averaged"]] == expected and "optimizer" not in saved, (
        out,
        saved["averaged"],
    )
    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "annotated_transformer.cli",
            "average",
            str(run),
            "--split",
            "test_2016_flickr",
        ],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2 and "that must stay a test" in refused.stderr, refused.stderr


def test_average_then_translate(interrupted_and_resumed: Path, tmp_path: Path):
    run = interrupted_and_resumed
    out = cli("average", str(run), "--last", "2").stdout
    assert "averaged epoch_01.pt, epoch_02.pt into" in out
    averaged = torch.load(run / "average_2.pt", weights_only=True)
    epochs = [torch.load(run / f"epoch_0{i}.pt", weights_only=True)["model"] for i in (1, 2)]
    name = "encoder.layers.0.feed_forward.w_1.weight"
    assert torch.allclose(averaged["model"][name], (epochs[0][name] + epochs[1][name]) / 2)
    assert "optimizer" not in averaged and averaged["vocabs"]
    files = cli(
        "average", str(run / "epoch_01.pt"), str(run / "epoch_02.pt"), "--out", str(tmp_path / "avg.pt")
    ).stdout
    assert (tmp_path / "avg.pt").is_file() and "avg.pt" in files
    translated = cli(
        "translate", "--checkpoint", str(tmp_path / "avg.pt"), "--beam", "2", input="Ein Hund.\n"
    ).stdout
    assert len(translated.splitlines()) == 1


def test_average_refuses_a_training_run_and_a_busy_output(
    interrupted_and_resumed: Path, tmp_path: Path, capsys
):
    "`average` refuses a run a trainer holds (it prunes snapshots as it goes) and an --out another command is writing."
    run, out = interrupted_and_resumed, tmp_path / "avg.pt"
    with hold_run_dir(run):  # as a training run holds it
        assert main(["average", str(run), "--last", "2"]) == 2
        assert f"A run is training in {run} now (process {os.getpid()})" in capsys.readouterr().err
    with one_writer_at_a_time(out):  # as another average or an export holds it
        assert main(["average", str(run / "epoch_01.pt"), str(run / "epoch_02.pt"), "--out", str(out)]) == 2
        assert f"Another command is writing {out} now" in capsys.readouterr().err
    assert not out.exists()


def test_evaluate_prints_sacrebleu(interrupted_and_resumed: Path, tmp_path: Path, corpus: Path):
    hyps = tmp_path / "hyps.txt"
    out = cli(
        "evaluate",
        "--checkpoint",
        str(interrupted_and_resumed / "epoch_02.pt"),
        "--split",
        "val",
        "--data-dir",
        str(corpus),
        "--hypotheses",
        str(hyps),
        "--json",
    ).stdout
    scores = json.loads(out.strip().splitlines()[-1])
    assert scores["split"] == "val" and scores["sentences"] == 500
    assert scores["signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:")
    assert 0 <= scores["sacrebleu"] <= 100
    assert len(hyps.read_text(encoding="utf-8").splitlines()) == 500


def test_evaluate_no_unk(tmp_path: Path, corpus: Path):
    """--no-unk: a word vocabulary's model (`--vocabulary words`, where rare words are <unk>) translates without a
    single <unk>, where without it its translations have some."""
    words = [
        "train",
        "multi30k",
        "--data-dir",
        str(corpus),
        "--out",
        str(tmp_path / "run"),
        "--vocabulary",
        "words",
    ]
    cli(*words, *TINY, "--epochs", "1")
    checkpoint, split = str(tmp_path / "run" / "last.pt"), ["--split", "val", "--data-dir", str(corpus)]
    unks = {}
    for flags in ([], ["--no-unk"]):
        hyps = tmp_path / "hyps.txt"
        cli("evaluate", "--checkpoint", checkpoint, "--beam", "1", *split, "--hypotheses", str(hyps), *flags)
        unks[" ".join(flags) or "allowed"] = hyps.read_text(encoding="utf-8").count("<unk>")
    assert unks["allowed"] > 0 and unks["--no-unk"] == 0, unks


def test_evaluate_on_your_own_files(interrupted_and_resumed: Path, tmp_path: Path, corpus: Path):
    "A split given as files scores as the split does, with the same signature; plain text and gzip alike."

    def scores(*test_set: str) -> dict:
        out = cli(
            "evaluate",
            "--checkpoint",
            str(interrupted_and_resumed / "epoch_02.pt"),
            "--beam",
            "1",
            *test_set,
            "--json",
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    split = scores("--split", "val", "--data-dir", str(corpus))
    files = [find_corpus_file(corpus, f"val.{lang}") for lang in ("de", "en")]
    given = scores("--source", str(files[0]), "--reference", str(files[1]))
    assert (given["sacrebleu"], given["signature"], given["sentences"]) == (
        split["sacrebleu"],
        split["signature"],
        500,
    )
    plain = tmp_path / "val.de"
    plain.write_text("\n".join(read_lines(files[0])) + "\n", encoding="utf-8")
    assert scores("--source", str(plain), "--reference", str(files[1]))["sacrebleu"] == split["sacrebleu"]


def test_wmt14_recipe_end_to_end(tmp_path: Path):
    "train wmt14 for some steps with snapshots on a time interval, resume it for more, average, evaluate on newstest2014."
    data, run = tmp_path / "wmt14", tmp_path / "run"
    write_wmt14_stand_in(data)
    train = ["train", "wmt14", "--data-dir", str(data), "--out", str(run), "--no-progress"]
    tiny = "--N 1 --d-model 32 --d-ff 64 --h 2 --bpe-size 800 --max-tokens 1000 --warmup 20".split()
    log = cli(*train, *tiny, "--steps", "20", "--snapshot-minutes", "0.005").stdout
    assert "2 per update" in log and "to 20 updates" in log  # the recipe's accumulation
    log = cli(*train, "--resume", "--steps", "30").stdout  # the run's own recipe, with more steps
    assert "update 20, to 30 updates" in log
    assert train_state(run / "last.pt")["step"] == 30
    snapshots = sorted(p.name for p in run.glob("step_*.pt"))
    assert (
        2 <= len(snapshots) <= 5 and snapshots[-1] == "step_0000030.pt"
    )  # the last update's weights, and earlier ones
    assert "into" in cli("average", str(run), "--last", "2").stdout
    out = cli(
        "evaluate",
        "--corpus",
        "wmt14",
        "--data-dir",
        str(data),
        "--checkpoint",
        str(run / "average_2.pt"),
        "--json",
    ).stdout
    scores = json.loads(out.strip().splitlines()[-1])
    assert (
        scores["split"] == "newstest2014" and scores["sentences"] == 100 and 0 <= scores["sacrebleu"] <= 100
    )
    hf = tmp_path / "hf"  # a BPE model exports for Hugging Face's transformers, and translates there as here
    cli("export", str(run / "average_2.pt"), "--out", str(hf), "--format", "transformers")
    text = "Ein Mann fährt Fahrrad.\nZwei Hunde spielen im Schnee.\n"
    greedy = [
        cli("translate", "--model", str(m), "--beam", "1", input=text).stdout
        for m in (run / "average_2.pt", hf)
    ]
    assert greedy[0] == greedy[1] and len(greedy[0].splitlines()) == 2, greedy


def test_your_own_corpus_end_to_end(tmp_path: Path):
    "train corpus, English→German: two gzipped files or one TSV train the same model; average, translate, evaluate, export."
    data = tmp_path / "data"
    data.mkdir()
    train = {lang: first_lines("train", lang, 2000) for lang in ("en", "de")}
    for lang, lines in train.items():
        (data / f"train.{lang}.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    (data / "train.tsv").write_text(
        "".join(f"{en}\t{de}\n" for en, de in zip(*train.values())), encoding="utf-8"
    )
    test = zip(*(first_lines("val", lang, 100) for lang in ("en", "de")))
    (data / "test.tsv").write_text("".join(f"{en}\t{de}\n" for en, de in test), encoding="utf-8")
    tiny = [*TINY, "--epochs", "2", "--val-size", "100"]
    files = ["--train", str(data / "train.en.gz"), str(data / "train.de.gz")]
    log = cli("train", "corpus", *files, "--out", str(tmp_path / "files"), *tiny).stdout
    assert "evaluate --source TEST_SOURCE --reference TEST_REFERENCE" in log
    tsv = ["--train", str(data / "train.tsv"), "--src-lang", "en", "--tgt-lang", "de"]
    cli("train", "corpus", *tsv, "--out", str(tmp_path / "tsv"), *tiny)
    weights = [torch.load(tmp_path / run / "last.pt", weights_only=True)["model"] for run in ("files", "tsv")]
    # the same pairs, the same run
    assert all(torch.equal(weights[0][name], weights[1][name]) for name in weights[0])
    assert "into" in cli("average", str(tmp_path / "tsv"), "--last", "2").stdout
    model = str(tmp_path / "tsv" / "average_2.pt")
    translated = cli("translate", "--model", model, input="A dog runs in the snow.\n\n").stdout
    assert translated.count("\n") == 2  # a line out for each line in, the empty one kept
    scores = json.loads(
        cli("evaluate", "--model", model, "--source", str(data / "test.tsv"), "--json").stdout.splitlines()[
            -1
        ]
    )
    assert scores["sentences"] == 100 and scores["split"] == str(data / "test.tsv")
    cli(
        "export",
        str(tmp_path / "tsv"),
        "--out",
        str(tmp_path / "model"),
        "--score",
        "--source",
        str(data / "test.tsv"),
    )
    config = json.loads((tmp_path / "model" / "config.json").read_text(encoding="utf-8"))
    assert (
        config["langs"] == {"src": "en", "tgt": "de"}
        and config["about"]["scores"]["sacrebleu"] == scores["sacrebleu"]
    )


def test_prepare_then_train_encodes_nothing(tmp_path: Path):
    """`prepare corpus` encodes a corpus once, into the cache; `train corpus` with the same data and recipe options then
    encodes nothing (its encoder made to raise); a file that is not there is one line."""
    data = tmp_path / "data"
    data.mkdir()
    for lang in ("en", "de"):
        lines = "\n".join(first_lines("train", lang, 1000)) + "\n"
        (data / f"train.{lang}.gz").write_bytes(gzip.compress(lines.encode()))
    env = {**os.environ, "ANNOTATED_TRANSFORMER_CACHE": str(tmp_path / "cache")}
    options = [
        "--train",
        str(data / "train.en.gz"),
        str(data / "train.de.gz"),
        "--vocabulary",
        "bpe",
        "--bpe-size",
        "800",  # as TINY's
    ]
    said = cli("prepare", "corpus", *options, env=env).stdout.splitlines()  # what it does, then what it made
    assert (
        said[0].startswith("Preparing the corpus once") and "Encoded the train split: 900 pairs" in said[-4]
    ), said
    assert re.match(
        r"prepared: 900 train, 100 val pairs as uint16 ids, [\d.]+ MB in .*cache/prepared/", said[-1]
    )
    run = [
        *with_fault(NEVER_ENCODES),
        "train",
        "corpus",
        *options,
        "--out",
        str(tmp_path / "run"),
        *TINY,
        "--steps",
        "3",
    ]
    trained = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, env=env)
    assert trained.returncode == 0, trained.stderr[-3000:]
    missing = subprocess.run(
        [sys.executable, "-m", "annotated_transformer.cli", "prepare", "corpus", "--train", "no.en", "no.de"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert missing.returncode == 2 and missing.stderr.strip().splitlines() == [
        "annotated-transformer: error: no.en is not there: give a corpus's files."
    ], missing.stderr


def test_an_empty_path_is_refused(capsys):
    "An empty path would be the current directory, which no option means: refused as argparse refuses a bad value."
    for argv in (["translate", "--model", ""], ["export", "runs/x", "--out", " "], ["average", ""]):
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        assert stopped.value.code == 2, argv
        assert "give a path, not an empty one" in capsys.readouterr().err, argv
