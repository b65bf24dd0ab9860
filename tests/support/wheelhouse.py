"""Offline installs of the actions' locked dependencies, as a runner makes them online.

`make deps` downloads every file of actions/requirements.lock and actions/uv.lock for this
machine into a wheelhouse beside the test virtualenv (``$VENV/wheelhouse``), with their hashes
checked. The install tests and the workflow harness point pip and uv at it with no index, so
they install exactly the locked versions whatever the test virtualenv itself holds (the
newest-releases job runs the suite in a virtualenv of other versions).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest


def wheelhouse() -> Path:
    path = Path(os.environ.get("PROMOTER_TEST_WHEELHOUSE") or Path(sys.prefix) / "wheelhouse")
    if not (path / ".complete").is_file():
        pytest.fail(f"no wheelhouse of the actions' locks at {path}: `make deps` builds it", pytrace=False)
    return path


def offline_env(config_dir: Path) -> dict[str, str]:
    """The variables that make pip and uv install from the wheelhouse alone; uv's configuration
    file is written into ``config_dir``. uv keeps the wheels it unpacks in one cache beside the
    wheelhouse, as a runner's actions/cache keeps them between jobs: each install then links
    them instead of unpacking 60 MB again into a new cache in the test's HOME."""
    house = wheelhouse()
    config = config_dir / "uv.toml"
    config.write_text(f"no-index = true\nfind-links = [{str(house)!r}]\n")
    return {
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(house),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "UV_CONFIG_FILE": str(config),
        "UV_CACHE_DIR": str(house.parent / "uv-cache"),
        "UV_LINK_MODE": "copy",  # the cache and the test's folders may be on other file systems
    }
