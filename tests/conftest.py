import os
from pathlib import Path

import pytest

from annotated_transformer.data import MULTI30K_SHA256, cache_dir


def pytest_addoption(parser):
    parser.addoption("--nb-flags", default="", help="notebook test flags to run, e.g. 'slow' or 'slow cuda' "
                     "(cells flagged with them are skipped otherwise, as in `nbdev-test --flags`)")


@pytest.fixture
def nb_flags(request) -> set[str]:
    return set(request.config.getoption("--nb-flags").split())


@pytest.fixture(scope="session")
def multi30k() -> Path:
    """Multi30k's directory, found as the package finds it but never downloaded: $MULTI30K_DIR, else the download cache.

    Without the data, a test that needs it fails under CI=true (a CI machine must provide the files) and is skipped
    elsewhere, saying how to provide them."""
    if os.environ.get("MULTI30K_DIR"):
        directory = Path(os.environ["MULTI30K_DIR"])
        if directory.is_dir(): return directory
        problem = f"MULTI30K_DIR={directory} is not a directory"
    else:
        directory = cache_dir() / "multi30k"
        if all((directory / name).is_file() for name in MULTI30K_SHA256): return directory
        problem = f"MULTI30K_DIR is not set and the download cache {directory} does not hold the files"
    message = f"{problem}: set MULTI30K_DIR to a directory holding Multi30k's files (the tests never download)"
    if os.environ.get("CI") == "true": pytest.fail(message)
    pytest.skip(message)
