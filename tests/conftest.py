import pytest


def pytest_addoption(parser):
    parser.addoption("--nb-flags", default="", help="notebook test flags to run, e.g. 'slow' or 'slow cuda' "
                     "(cells flagged with them are skipped otherwise, as in `nbdev-test --flags`)")


@pytest.fixture
def nb_flags(request) -> set[str]:
    return set(request.config.getoption("--nb-flags").split())
