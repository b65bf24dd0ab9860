"""actions/install.sh installs the release of the action's own version from the package index
when the action is exactly a release, and builds its checkout otherwise. The actions here are
`git archive` trees (what GitHub hands a `uses:`) of a repository with release tags; the index is
a folder (PEP 503) holding the wheel built at v9.8.7; the locked dependencies come from the
offline wheelhouse: no network."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.actions.releases import archive, build_wheel, commit, git, promoter_repo, simple_index
from tests.support.wheelhouse import wheelhouse


@dataclass(frozen=True)
class Releases:
    repo: Path  # a git checkout, one commit after v9.8.7
    older: Path  # the archive of v9.8.6
    tagged: Path  # the archive of v9.8.7
    later: Path  # the archive of the commit after it
    later_sha: str
    index: str  # the URL of a package index holding promoter 9.8.7 alone
    cache: Path  # PROMOTER_PACKAGE_CACHE, kept between installs as actions/cache keeps it between jobs


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> Releases:
    work = tmp_path_factory.mktemp("releases")
    repo = promoter_repo(work / "repo")
    git(repo, "tag", "--annotate", "v9.8.6", "--message", "9.8.6")
    commit(repo, "Release v9.8.7")
    git(repo, "tag", "--annotate", "v9.8.7", "--message", "9.8.7")
    git(repo, "tag", "v9")  # the major tag, lightweight
    later_sha = commit(repo, "After the release")
    wheel = build_wheel(archive(repo, "v9.8.7", work / "build"), work / "dist")
    return Releases(
        repo=repo,
        older=archive(repo, "v9.8.6", work / "older"),
        tagged=archive(repo, "v9.8.7", work / "tagged"),
        later=archive(repo, "HEAD", work / "later"),
        later_sha=later_sha,
        index=simple_index(work / "index", wheel),
        cache=work / "package-cache",
    )


def install(
    tmp_path: Path,
    action: Path,
    releases: Releases,
    installer: str = "auto",
    index: str = "",
    **extra: str,
) -> subprocess.CompletedProcess[str]:
    """``action``'s install.sh with no uv on PATH (the locked uv, installed into the package
    cache the first time), the locked files from the wheelhouse; the release from ``index``
    (PIP_INDEX_URL), else from the releases' index, where uv's configuration file points."""
    index = index or releases.index
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    house = wheelhouse()
    config = tmp_path / "uv.toml"
    config.write_text(f"index-url = {releases.index!r}\nfind-links = [{str(house)!r}]\n")
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "GITHUB_"))}
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "uv").exists())
    env = {
        **inherited,
        "PATH": path,
        "RUNNER_TEMP": str(temp),
        "PROMOTER_INSTALLER": installer,
        "PROMOTER_PYTHON": sys.executable,
        "PIP_CONFIG_FILE": os.devnull,  # this machine's pip configuration names other indexes
        "PIP_INDEX_URL": index,
        "PIP_FIND_LINKS": str(house),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PROMOTER_PACKAGE_CACHE": str(releases.cache),
        "UV_CONFIG_FILE": str(config),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        **extra,
    }
    return subprocess.run(
        ["bash", str(action / "actions" / "install.sh")], capture_output=True, text=True, env=env, check=False
    )


def installed(tmp_path: Path, done: subprocess.CompletedProcess[str]) -> tuple[str, str, bool]:
    """The install's line, the version the promoter command says, and whether it was installed
    from a folder (PEP 610's direct_url.json) rather than from an index."""
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("installed promoter ")]
    promoter = Path((tmp_path / "output").read_text().strip().removeprefix("promoter="))
    said = subprocess.run([promoter, "--version"], capture_output=True, text=True, check=True).stdout
    direct = promoter.parent.parent.glob("lib/python*/site-packages/promoter-*.dist-info/direct_url.json")
    return line, said.strip(), any(direct)


@pytest.mark.parametrize("installer", ["auto", "pip"])
def test_a_release_installs_its_version_from_the_package_index(
    tmp_path: Path, releases: Releases, installer: str
) -> None:
    line, said, from_folder = installed(tmp_path, install(tmp_path, releases.tagged, releases, installer))
    how = "uv" if installer == "auto" else "pip"
    assert line.startswith(
        f"installed promoter 9.8.7 from the package index ({releases.index}); its locked dependencies with {how}, in "
    )
    assert said == "promoter, version 9.8.7" and not from_folder


def test_an_index_without_the_release_is_an_error_not_another_version(
    tmp_path: Path, releases: Releases
) -> None:
    done = install(tmp_path, releases.older, releases)  # the index has 9.8.7 alone
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "::error title=promoter::could not install promoter 9.8.6, this action's release, from the package "
        f"index {releases.index}: not published there yet, or the index cannot be reached"
    )
    assert not (tmp_path / "output").exists()


def test_a_commit_after_a_release_installs_its_checkout(tmp_path: Path, releases: Releases) -> None:
    short = releases.later_sha[:7]
    line, said, from_folder = installed(tmp_path, install(tmp_path, releases.later, releases))
    assert line.startswith(
        f"installed promoter 9.8.8.dev1+g{short} from the action's checkout (not a release: v9.8.7-1-g{short}); "
    )
    assert said == f"promoter, version 9.8.8.dev1+g{short}" and from_folder


def test_a_checkout_is_a_release_when_the_action_ref_names_one(tmp_path: Path, releases: Releases) -> None:
    """GITHUB_ACTION_REF, where no archive says: a git checkout one commit after v9.8.7 here."""
    line, said, from_folder = installed(
        tmp_path, install(tmp_path, releases.repo, releases, GITHUB_ACTION_REF="v9.8.7")
    )
    assert line.startswith(f"installed promoter 9.8.7 from the package index ({releases.index}); ")
    assert said == "promoter, version 9.8.7" and not from_folder
    other = tmp_path / "branch"
    other.mkdir()
    line, said, from_folder = installed(
        other, install(other, releases.repo, releases, GITHUB_ACTION_REF="main")
    )
    short = releases.later_sha[:7]
    assert line.startswith(
        "installed promoter 9.8.8.dev1+g"
        f"{releases.later_sha[:9]} from the action's checkout (not a release: a git checkout at v9.8.7-1-g{short}); "
    )
    assert from_folder


def test_a_copy_that_must_run_its_own_files_installs_its_checkout(tmp_path: Path, releases: Releases) -> None:
    """PROMOTER_INSTALL_FROM=checkout: a reviewed copy of a release, built from its own files."""
    line, said, from_folder = installed(
        tmp_path, install(tmp_path, releases.tagged, releases, PROMOTER_INSTALL_FROM="checkout")
    )
    assert line.startswith(
        "installed promoter 9.8.7 from the action's checkout (PROMOTER_INSTALL_FROM=checkout); "
    )
    assert said == "promoter, version 9.8.7" and from_folder
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    done = install(wrong, releases.tagged, releases, PROMOTER_INSTALL_FROM="pypi")
    assert (done.returncode, done.stderr.strip()) == (
        2,
        "::error title=promoter::PROMOTER_INSTALL_FROM must be auto or checkout, not pypi",
    )


def test_the_log_names_the_index_without_its_credentials(tmp_path: Path, releases: Releases) -> None:
    index = "http://reader:s3cret@127.0.0.1:9/simple"  # nothing listens on the discard port
    # uv installs the locked dependencies from its configuration's index, the release from PIP_INDEX_URL's
    done = install(
        tmp_path,
        releases.tagged,
        releases,
        index=index,
        PIP_RETRIES="0",
        PIP_TIMEOUT="1",
        UV_HTTP_RETRIES="0",
    )
    assert done.returncode == 1 and "s3cret" not in done.stdout + done.stderr.splitlines()[-1]
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(
            "::error title=promoter::could not install promoter 9.8.7, this action's release, from the package "
            "index http://127.0.0.1:9/simple: "
        )
    )


def test_a_git_checkout_on_a_release_tag_installs_that_release(tmp_path: Path, releases: Releases) -> None:
    """The reusable workflow's checkout of the promoter at a release tag (fetched with its tags)."""
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "--quiet", str(releases.repo), str(checkout)], check=True)
    git(checkout, "checkout", "--quiet", "v9.8.7")
    here = tmp_path / "on-tag"
    here.mkdir()
    line, said, from_folder = installed(here, install(here, checkout, releases))
    assert line.startswith(f"installed promoter 9.8.7 from the package index ({releases.index}); ")
    assert said == "promoter, version 9.8.7" and not from_folder
