"""The provenance records, per folder, the render memo's entry (what the folder was rendered
from, and the tree that gave): a runner with an empty cache renders only what changed, and a
folder edited by hand on the platform branch is still put back."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.generate import SIZES, Generated, change_one_cluster_type, generate
from benchmarks.scenarios import refs, run_flow
from promoter.platform.provenance import PROVENANCE, Provenance
from promoter.rendering.render import Renderer

TINY = dataclasses.replace(SIZES["S"], workloads=4, cluster_types=8)


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Generated:
    generated = generate(tmp_path / "tiny", TINY)
    monkeypatch.setenv("PROMOTER_CACHE_DIR", str(tmp_path / "warm"))
    full = run_flow(generated.control_plane, env="dev", scheduling=False)
    assert full["report"]["state"] == "success"
    # Folders new to the branch are recorded from the next commit on (their tree ids were not
    # known before the first): one config value changed, the scheduling flow commits again.
    assert provenance(generated).rendered == {}
    change_one_cluster_type(generated, "dev")
    again = run_flow(generated.control_plane, env="dev", scheduling=True)
    assert again["report"]["state"] == "success"
    return generated


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def renders(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    original = Renderer.render_read

    def counted(self: Renderer, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Renderer, "render_read", counted)
    return calls


def provenance(generated: Generated, ref: str = "dev") -> Provenance:
    found = Provenance.parse(git(generated.platform, "show", f"{ref}:{PROVENANCE}").encode())
    assert found is not None
    return found


def cold(generated: Generated, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> dict[str, Any]:
    monkeypatch.setenv("PROMOTER_CACHE_DIR", str(tmp_path / name))
    return run_flow(generated.control_plane, env="dev", scheduling=True)


def edit_on_platform(generated: Generated, tmp_path: Path, path: str, text: str) -> None:
    """A commit by hand on the platform's dev branch (the provenance left as it was)."""
    clone = tmp_path / "by-hand"
    subprocess.run(["git", "clone", "-q", "-b", "dev", str(generated.platform), str(clone)], check=True)
    (clone / path).write_text(text)
    git(clone, "commit", "-qam", "by hand")
    git(clone, "push", "-q", "origin", "dev")


def test_every_folder_is_recorded_with_the_tree_it_has(tiny: Generated) -> None:
    found = provenance(tiny)
    assert set(found.rendered) == set(found.cluster_types)
    for folder, entry in found.rendered.items():
        digest, tree = entry.split(" ")
        assert len(digest) == 64
        assert tree == git(tiny.platform, "rev-parse", f"dev:{folder}").strip()
    assert len(found.memo_entries()) == len(found.cluster_types)


def test_an_empty_cache_renders_nothing_for_an_unchanged_environment(
    tiny: Generated, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settled = refs(tiny.platform)
    count = renders(monkeypatch)
    result = cold(tiny, tmp_path, monkeypatch, "cold")
    assert result["report"]["state"] == "noop"
    assert refs(tiny.platform) == settled
    assert count[0] == 0


def test_a_folder_edited_by_hand_is_put_back_from_the_record(
    tiny: Generated, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = provenance(tiny).cluster_types[0]
    path = next(
        p
        for p in git(tiny.platform, "ls-tree", "-r", "--name-only", "dev").split()
        if p.startswith(folder + "/")
    )
    rendered = git(tiny.platform, "show", f"dev:{path}")
    edit_on_platform(tiny, tmp_path, path, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: edited}\n")
    count = renders(monkeypatch)
    result = cold(tiny, tmp_path, monkeypatch, "cold")
    assert result["report"]["state"] == "success", result["report"]
    assert git(tiny.platform, "show", f"dev:{path}") == rendered
    assert count[0] == 0  # the recorded tree, not a render, put it back


def test_a_record_that_names_no_tree_of_the_repo_is_ignored(
    tiny: Generated, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = git(tiny.platform, "show", f"dev:{PROVENANCE}")
    body = yaml.safe_load(text)
    body["rendered"] = {
        folder: ("f" * 64 if i % 2 else entry.split(" ")[0]) + " " + "0" * 40
        for i, (folder, entry) in enumerate(body["rendered"].items())
    }
    body["rendered"]["extra"] = "not an entry"
    edit_on_platform(tiny, tmp_path, PROVENANCE, yaml.safe_dump(body, sort_keys=False))
    count = renders(monkeypatch)
    result = cold(tiny, tmp_path, monkeypatch, "cold")
    assert result["report"]["state"] in ("noop", "success")
    assert count[0] == 3 * TINY.assignments  # nothing usable: everything rendered and checked


def test_a_record_alone_is_no_change(
    tiny: Generated, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tree written before the record (or with an older one) stays as it is on a no-op."""
    body = yaml.safe_load(git(tiny.platform, "show", f"dev:{PROVENANCE}"))
    del body["rendered"]
    edit_on_platform(tiny, tmp_path, PROVENANCE, yaml.safe_dump(body, sort_keys=False))
    settled = refs(tiny.platform)
    result = run_flow(tiny.control_plane, env="dev", scheduling=True)  # the warm cache
    assert result["report"]["state"] == "noop"
    assert refs(tiny.platform) == settled
