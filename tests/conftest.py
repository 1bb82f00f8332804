import os
from pathlib import Path

import pytest

from annotated_transformer.data import DownloadError, multi30k_dir


def pytest_addoption(parser):
    parser.addoption(
        "--nb-flags",
        default="",
        help="notebook test flags to run, e.g. 'slow' or 'slow cuda' "
        "(cells flagged with them are skipped otherwise, as in `nbdev-test --flags`)",
    )


@pytest.fixture
def nb_flags(request) -> set[str]:
    return set(request.config.getoption("--nb-flags").split())


@pytest.fixture(scope="session")
def multi30k() -> Path:
    """Multi30k's directory, found as the package finds it ($MULTI30K_DIR, else the download cache) but never downloaded.

    Without the data, a test that needs it fails under CI=true (a CI machine must provide the files) and is skipped
    elsewhere, with the package's own message on how to provide them."""
    try:
        return multi30k_dir(url="file:///the-tests-never-download/", progress=False)  # a download here always fails
    except (FileNotFoundError, DownloadError) as e:
        message = f"The tests never download Multi30k. {e}"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)
