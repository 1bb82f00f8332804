"""The package as a user gets it: built into a wheel and an sdist that twine accepts, the wheel installed with pip
into a fresh virtual environment and used from its command, and imported by a plain Python interpreter, with none
of the notebook tooling around."""

import os
import re
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest
import tomllib
from corpora import write_corpus

from annotated_transformer import __version__

# its module-scoped fixtures are built once, on one worker
pytestmark = pytest.mark.xdist_group("test_package")

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted(p.stem for p in (ROOT / "annotated_transformer").glob("[!_]*.py"))
# The CPU build of PyTorch this project is tested with; TORCH_INDEX, where set, names the package index to take it from.
TORCH = os.environ.get("TORCH_REQUIREMENT", "torch==2.13.0")


def run(*args, **kwargs) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True, **kwargs).stdout


def test_modules_import_in_a_fresh_interpreter():
    "Every module imports on its own, exports what its __all__ names, and pulls in no notebook tooling."
    code = textwrap.dedent(f"""
        import importlib, sys
        for name in {MODULES!r}:
            module = importlib.import_module("annotated_transformer." + name)
            missing = [n for n in module.__all__ if not hasattr(module, n)]
            assert not missing, (name, missing)
        tooling = sorted({{"nbdev", "fastcore", "IPython"}} & set(sys.modules))
        assert not tooling, tooling
        print("ok", len(sys.modules["annotated_transformer.model"].__all__))
    """)
    assert run(sys.executable, "-c", code, cwd=ROOT).startswith("ok")


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    "What `make dist` makes: an sdist, and a wheel built from it (with the setuptools installed: no network), checked by twine."
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT))
    run(sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(out.iterdir())))
    return out


def test_dist_holds_this_version(dist: Path):
    names = sorted(p.name for p in dist.iterdir())
    assert names == [
        f"annotated_transformer-{__version__}-py3-none-any.whl",
        f"annotated_transformer-{__version__}.tar.gz",
    ], names


def test_changelog_starts_with_this_version():
    first = next(
        line
        for line in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("## ")
    )
    assert first.startswith(f"## {__version__} "), first


def test_readme_names_the_runtime_dependencies_as_declared():
    "The README's list of what `pip install .` needs is pyproject.toml's, requirement by requirement."
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    listed = re.search(
        r"They need only what `pyproject.toml` declares: (.*?)\.\s", (ROOT / "README.md").read_text()
    ).group(1)
    assert re.findall(r"`([^`]+)`", listed) == declared


def test_the_wheel_installs_and_runs_in_a_fresh_venv(dist: Path, tmp_path: Path):
    "The wheel, not an editable install, in a new virtual environment: its command trains a tiny model and translates."
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python, command = env_dir / "bin" / "python", env_dir / "bin" / "annotated-transformer"
    index = ["--index-url", os.environ["TORCH_INDEX"]] if os.environ.get("TORCH_INDEX") else []
    run(python, "-m", "pip", "install", "-q", TORCH, *index)
    run(python, "-m", "pip", "install", "-q", str(next(dist.glob("*.whl"))))
    assert run(command, "--version", cwd=tmp_path) == f"annotated-transformer {__version__}\n"
    assert all(
        c in run(command, "--help", cwd=tmp_path) for c in ("train", "translate", "evaluate", "average")
    )
    code = textwrap.dedent("""
        import annotated_transformer, torch
        from annotated_transformer.model import make_model
        from annotated_transformer.attention import padding_mask, subsequent_mask
        model = make_model(src_vocab=20, tgt_vocab=20, N=2, d_model=32, d_ff=64, h=4).eval()
        src, tgt = torch.randint(1, 20, (3, 7)), torch.randint(1, 20, (3, 5))
        out = model.generator(model(src, tgt, padding_mask(src, 0), subsequent_mask(5)))
        assert out.shape == (3, 5, 20), out.shape
        print(annotated_transformer.__file__)
    """)
    location = run(python, "-c", code, cwd=tmp_path).strip()
    assert Path(location).is_relative_to(env_dir), f"imported from {location}, not from the fresh environment"
    env = {
        **os.environ,
        "MULTI30K_DIR": str(write_corpus(tmp_path / "multi30k", train=2000, test=100)),
    }
    tiny = (
        "--epochs 1 --N 1 --d-model 32 --d-ff 64 --h 2 --bpe-size 800 --max-tokens 1500 --no-progress".split()
    )
    run(command, "train", "multi30k", "--out", "run", *tiny, cwd=tmp_path, env=env)
    translated = run(
        command,
        "translate",
        "--checkpoint",
        "run/last.pt",
        "--beam",
        "2",
        cwd=tmp_path,
        input="Ein Hund läuft.\n\nZwei Männer.\n",
    ).split("\n")
    assert len(translated) == 4 and translated[0] and translated[1] == "" and translated[2], translated
