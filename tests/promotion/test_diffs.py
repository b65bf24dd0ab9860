"""What a promotion would change (promoter/promotion/diffs.py): the environments chosen, a file's
patch, the counts without the provenance file."""

from __future__ import annotations

from pathlib import Path

import pytest

from promoter.controlplane.repo import ControlPlane
from promoter.errors import UsageError
from promoter.platform.objects import Change
from promoter.promotion.diffs import EnvDiff, diff_data, diff_text, file_patch, select
from tests.support.helpers import ControlPlaneFactory


def _pipeline(tmp_path: Path) -> object:
    path = ControlPlaneFactory(tmp_path).create()
    cp = ControlPlane(str(path), "main")
    return cp.main(cp.resolve(None)).pipeline


def test_select_takes_names_a_branch_or_the_ones_up_to_an_environment(tmp_path: Path) -> None:
    pipeline = _pipeline(tmp_path)
    assert [e.name for e in select(pipeline, (), None, None)] == ["dev", "qa", "prod"]
    assert [e.name for e in select(pipeline, (), None, "qa")] == ["dev", "qa"]
    assert [e.name for e in select(pipeline, ("prod", "dev"), None, None)] == ["dev", "prod"]
    assert [e.name for e in select(pipeline, (), "qa", None)] == ["qa"]
    with pytest.raises(
        UsageError, match=r"^staging: no such environment \(the Pipeline has dev, qa, prod\)$"
    ):
        select(pipeline, ("staging",), None, None)
    with pytest.raises(
        UsageError, match="--env-branch nowhere: no environment of the Pipeline is kept on it"
    ):
        select(pipeline, (), "nowhere", None)


def test_a_patch_names_binary_files_and_a_missing_newline() -> None:
    assert file_patch("x.bin", b"\xff", b"\xfe") == "Binary file x.bin differs\n"
    assert file_patch("a.yaml", None, b"a: 1") == (
        "--- /dev/null\n+++ b/a.yaml\n@@ -0,0 +1 @@\n+a: 1\n\\ No newline at end of file\n"
    )


def test_the_provenance_file_is_not_counted() -> None:
    diff = EnvDiff(
        "dev",
        "dev",
        None,
        "a" * 40,
        "b" * 40,
        {".promoter": Change(1, 0, 0), "app": Change(0, 2, 1)},
        ["p\n"],
    )
    assert (diff.counts.added, diff.counts.changed, diff.counts.removed, diff.changed) == (0, 2, 1, True)
    assert diff_text([diff]) == "# dev: +0 ~2 -1 against new branch (main aaaaaaa, environment bbbbbbb)\np\n"
    assert diff_data([diff])["environments"][0]["patch"] == "p\n"
