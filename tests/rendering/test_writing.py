"""A rendered tree written out (promoter/rendering/writing.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from promoter.errors import UsageError
from promoter.rendering.writing import stream, write_tree


def test_an_earlier_render_is_replaced_whole_and_another_folder_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, "out", {"a/x.yaml": b"x: 1\n", ".mark": b"1"}, ".mark")
    write_tree(out, "out", {"b/y.yaml": b"y: 2\n", ".mark": b"2"}, ".mark")
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == [".mark", "b/y.yaml"]
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    with pytest.raises(UsageError, match="--out other: not empty and not an earlier render"):
        write_tree(other, "other", {"a.yaml": b""}, ".mark")
    assert (other / "keep.txt").read_text() == "mine"


def test_the_stream_heads_each_document_with_its_path_in_order() -> None:
    files = {"b.yaml": b"---\nb: 1", "a.yaml": b"a: 1\n"}
    assert stream(files) == "---\n# Source: a.yaml\na: 1\n---\n# Source: b.yaml\nb: 1\n"
