import os
from pathlib import Path

# `make test` runs on several workers (pytest-xdist): each worker, and the kernels and commands it starts, gets its
# share of the cores, since PyTorch's threads on a busy core run many times slower. Set before PyTorch is imported.
if (workers := int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))) > 1:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))

import pytest  # noqa: E402

from annotated_transformer.data import DownloadError, multi30k_dir  # noqa: E402


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
        # a download here always fails
        return multi30k_dir(url="file:///the-tests-never-download/", progress=False)
    except (FileNotFoundError, DownloadError) as e:
        message = f"The tests never download Multi30k. {e}"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)
