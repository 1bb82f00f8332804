"""The package as a user gets it: installed with pip into a fresh virtual environment, and
imported by a plain Python interpreter, with none of the notebook tooling around."""
import os
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

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


def test_pip_install_in_a_fresh_venv(tmp_path: Path):
    "`pip install .` into a new virtual environment gives a package whose make_model works."
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    index = ["--index-url", os.environ["TORCH_INDEX"]] if os.environ.get("TORCH_INDEX") else []
    run(python, "-m", "pip", "install", "-q", TORCH, *index)
    run(python, "-m", "pip", "install", "-q", str(ROOT))
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
