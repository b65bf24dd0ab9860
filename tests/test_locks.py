"""The locks agree: the development lock covers every requirement pyproject.toml declares, at
versions its ranges allow, and the demo's and the actions' locks hold the same versions, each
pinned with hashes. A fresh clone installs what these files say, whatever PyPI holds that day."""

from __future__ import annotations

import tomllib

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.actions.test_install import pins
from tests.support.paths import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
DEV = pins(ROOT / "requirements" / "dev.lock")


def declared() -> list[Requirement]:
    texts = (
        PROJECT["dependencies"]
        + PROJECT["optional-dependencies"]["hub"]
        + PROJECT["optional-dependencies"]["test"]
    )
    return [Requirement(text) for text in texts]


def test_the_development_lock_holds_every_declared_requirement_at_an_allowed_version() -> None:
    assert DEV and all(hashes >= 1 for _, hashes in DEV.values()), DEV
    for wanted in declared():
        if wanted.marker and not wanted.marker.evaluate(default_environment()):
            continue
        version, _ = DEV[canonicalize_name(wanted.name)]
        assert wanted.specifier.contains(version), (str(wanted), version)


@pytest.mark.parametrize("lock", ["requirements/run.lock", "actions/requirements.lock"])
def test_the_other_locks_hold_the_development_versions(lock: str) -> None:
    locked = pins(ROOT / lock)
    assert locked and all(hashes >= 1 for _, hashes in locked.values()), locked
    differ = {
        name: (version, DEV[name][0]) for name, (version, _) in locked.items() if DEV[name][0] != version
    }
    assert not differ, f"{lock} and requirements/dev.lock disagree (run `make lock`): {differ}"


def test_the_oldest_pyyaml_lock_is_the_floor_of_the_range() -> None:
    (wanted,) = [Requirement(t) for t in PROJECT["dependencies"] if Requirement(t).name == "PyYAML"]
    oldest = pins(ROOT / "requirements" / "pyyaml-oldest.lock")
    assert list(oldest) == ["pyyaml"] and oldest["pyyaml"][1] >= 10
    assert str(wanted.specifier) == f">={oldest['pyyaml'][0]}"


@pytest.mark.parametrize(
    "lock", ["requirements/dev.lock", "requirements/run.lock", "actions/requirements.lock"]
)
def test_every_lock_holds_the_build_requirements(lock: str) -> None:
    """`make` and the actions build the checkout with no build isolation and no index: the build
    backend and setuptools-scm (the version from the git tag) come from the lock."""
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    locked = pins(ROOT / lock)
    for wanted in map(Requirement, requires):
        assert canonicalize_name(wanted.name) in locked, (lock, str(wanted))
        assert wanted.specifier.contains(locked[canonicalize_name(wanted.name)][0]), (lock, str(wanted))
    assert {"setuptools", "setuptools-scm"} <= {canonicalize_name(Requirement(r).name) for r in requires}
