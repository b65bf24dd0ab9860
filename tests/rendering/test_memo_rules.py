"""The folder memo stays sound when the rules change: the digest a memoised folder is found by
holds the code of every check of what is rendered, so a new rule reaches it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from promoter.controlplane.repo import ControlPlane
from promoter.errors import TemplateError
from promoter.k8s import manifests
from promoter.rendering import memo, parallel, tree
from promoter.rendering.memo import FolderMemo
from tests.support.helpers import ControlPlaneFactory

PACKAGE = Path(memo.__file__).parent.parent


def loaded(factory: ControlPlaneFactory) -> tuple[Any, Any]:
    factory.create()
    cp = ControlPlane(factory.path)
    main = cp.main(cp.resolve(None))
    env = main.pipeline.environment("dev")
    assert env is not None
    return main, cp.environment(env)


def renders(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    count = [0]
    real = parallel.render_checked

    def counted(renderer: Any, templates: Any, assignments: Any) -> Any:
        count[0] += len(assignments)
        return real(renderer, templates, assignments)

    monkeypatch.setattr(tree, "render_checked", counted)
    return count


def test_a_new_rule_reaches_memoised_folders(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    main, objects = loaded(factory)
    first = tree.render_environment(main, objects, "dev")
    [folder] = first.files.folders()  # type: ignore[attr-defined]
    FolderMemo.default().put(first.files.digest(folder), "1" * 40)  # type: ignore[attr-defined]
    count = renders(monkeypatch)
    tree.render_environment(main, objects, "dev")
    assert count[0] == 0  # found in the memo: neither rendered nor checked

    # A new rule: promoter/k8s/manifests.py changes, and with it what it finds.
    def new_rule(docs: list[manifests.Doc]) -> list[manifests.Problem]:
        return [
            manifests.Problem(d.path, str(d), "the new rule")
            for d in docs
            if d.body.get("kind") == "Namespace"
        ]

    monkeypatch.setattr(manifests, "check_folder", new_rule)
    rules = Path(manifests.__file__)
    read_bytes = Path.read_bytes
    monkeypatch.setattr(
        Path, "read_bytes", lambda self: read_bytes(self) + (b"\n# the new rule\n" if self == rules else b"")
    )
    monkeypatch.setattr(memo, "_CODE_DIGEST", [])
    with pytest.raises(TemplateError, match="the new rule"):
        tree.render_environment(main, objects, "dev")
    assert count[0] == 1


def test_the_digest_holds_every_check_and_the_libraries_that_judge() -> None:
    digested = set(memo.digested_files())
    for module in ("checks.py", "parse.py", "skeleton.py", "render.py", "sandbox.py"):
        assert PACKAGE / "rendering" / module in digested
    assert set((PACKAGE / "k8s").glob("*.py")) <= digested
    assert set((PACKAGE / "k8s" / "schemas").glob("*.json")) <= digested
    assert {"jsonschema", "jsonschema-rs", "yaml-rs", "PyYAML", "jinja2"} <= set(memo._LIBRARIES)
