"""The contract's files and note as Argo CD's commit-server writes them and as GitOps Promoter
reads them (docs/hydrator.md cites the code): field names and casing, JSON layout, the note."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import datetime
from pathlib import Path

from promoter.gitcmd import Git
from promoter.platform.hydrator import (
    METADATA,
    NOTES_REF,
    README,
    DryCommit,
    add_note,
    dry_commit,
    folder_metadata,
    hydrated,
    metadata,
    note,
    read_note,
    readme,
)
from promoter.platform.plan import TreeReader
from tests.support.helpers import Commit, import_commits

SHA = "0123456789abcdef0123456789abcdef01234567"
DRY = DryCommit(
    SHA,
    "https://github.com/org/control-plane",
    "Ann <ann@example.com>",
    "2026-01-02T03:04:05+01:00",
    "Add <app> & more",
    "Why: \u00e9t\u00e9.\n\nSigned-off-by: Ann <ann@example.com>",
)


def test_the_environment_metadata_is_argo_cds_json_byte_for_byte() -> None:
    # json.Encoder with SetIndent("", "  ") and SetEscapeHTML(false): keys in the struct's
    # order, "<", ">" and "&" as they are, a final newline (util/hydrator/hydrator.go)
    assert (
        metadata(DRY)
        == (
            "{\n"
            '  "repoURL": "https://github.com/org/control-plane",\n'
            f'  "drySha": "{SHA}",\n'
            '  "author": "Ann <ann@example.com>",\n'
            '  "date": "2026-01-02T03:04:05+01:00",\n'
            '  "subject": "Add <app> & more",\n'
            '  "body": "Why: \u00e9t\u00e9.\\n\\nSigned-off-by: Ann <ann@example.com>"\n'
            "}\n"
        ).encode()
    )


def test_gitops_promoter_reads_every_field_it_knows() -> None:
    """HydratorMetadata (api/v1alpha1/changetransferpolicy_types.go): drySha a full hex sha,
    date a metav1.Time (RFC 3339, an empty string fails to parse), the rest strings."""
    read = json.loads(metadata(DRY))
    assert set(read) <= {"repoURL", "drySha", "author", "date", "subject", "body", "references"}
    assert re.fullmatch(r"[a-f0-9]{40}|[a-f0-9]{64}", read["drySha"])
    assert datetime.fromisoformat(read["date"]).utcoffset() is not None
    assert (read["author"], read["subject"]) == (DRY.author, DRY.subject)


def test_empty_fields_are_left_out_as_omitempty_does() -> None:
    bare = DryCommit(SHA, None, "Ann <a@b>", "2026-01-02T03:04:05Z", "s", "")
    assert json.loads(metadata(bare)) == {
        "drySha": SHA,
        "author": "Ann <a@b>",
        "date": "2026-01-02T03:04:05Z",
        "subject": "s",
    }
    assert json.loads(folder_metadata(bare, ())) == {"drySha": SHA}


def test_a_folder_has_argo_cds_per_path_metadata_and_readme() -> None:
    commands = ("promoter render --env dev --commit x --out rendered",)
    assert json.loads(folder_metadata(DRY, commands)) == {
        "repoURL": DRY.repo_url,
        "drySha": SHA,
        "commands": list(commands),
    }
    # Argo CD's DefaultManifestHydrationReadmeTemplate (util/settings/settings.go), no references
    assert readme(DRY, commands).decode() == (
        "# Manifest Hydration\n\n"
        "To hydrate the manifests in this repository, run the following commands:\n\n"
        "```shell\n"
        "git clone https://github.com/org/control-plane\n"
        "# cd into the cloned directory\n"
        f"git checkout {SHA}\n"
        "promoter render --env dev --commit x --out rendered\n"
        "```\n"
    )


def test_the_note_is_argo_cds_commit_note() -> None:
    assert note(SHA) == f'{{"drySha":"{SHA}"}}'.encode()  # json.Marshal(CommitNote{...})


def test_a_dry_commit_is_read_as_argo_cd_cuts_its_message(tmp_path: Path) -> None:
    repo = tmp_path / "cp"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (sha,) = import_commits(repo, [Commit("main", {"a": "1"}, "Subject line\n\nBody one.\n\nTrailer: x\n")])
    dry = dry_commit(Git(repo), sha, "https://user:tok3n@example.com/org/cp.git")
    assert (dry.sha, dry.subject, dry.body) == (sha, "Subject line", "Body one.\n\nTrailer: x")
    assert dry.repo_url == "https://example.com/org/cp.git"  # no token in what is pushed
    assert re.fullmatch(r".+ <.+>", dry.author)
    assert datetime.fromisoformat(dry.date).utcoffset() is not None


def test_folders_keep_their_files_where_their_manifests_did_not_change(tmp_path: Path) -> None:
    """Argo CD writes a path's hydrator.metadata and README only when its manifest changed."""
    repo = tmp_path / "platform.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(repo)], check=True)
    old = DryCommit("1" * 40, None, "A <a@b>", "2026-01-01T00:00:00Z", "old", "")
    before = {
        "small/app/a.yaml": "a: 1\n",
        f"small/{METADATA}": folder_metadata(old, ()).decode(),
        f"small/{README}": readme(old, ()).decode(),
        "large/app/a.yaml": "a: 1\n",
        f"large/{METADATA}": folder_metadata(old, ()).decode(),
        f"large/{README}": readme(old, ()).decode(),
    }
    (base,) = import_commits(repo, [Commit("dev", {f"envs/{p}": t for p, t in before.items()}, "old")])
    files = {"small/app/a.yaml": b"a: 1\n", "large/app/a.yaml": b"a: 2\n", "new/app/a.yaml": b"b\n"}

    out = hydrated(
        TreeReader(Git(repo)), base, "envs", files, lambda f: (folder_metadata(DRY, ()), readme(DRY, ()))
    )

    assert out[f"small/{METADATA}"] == folder_metadata(old, ())  # unchanged: the base's own
    assert out[f"large/{METADATA}"] == folder_metadata(DRY, ())  # changed: the new commit's
    assert out[f"new/{README}"] == readme(DRY, ())
    assert {p: out[p] for p in files} == files and METADATA not in out  # the top: the caller's


def test_a_note_is_added_onto_notes_another_writer_pushed_meanwhile(tmp_path: Path) -> None:
    remote = tmp_path / "platform.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    first, second = import_commits(
        remote, [Commit("dev", {"a": "1"}, "one"), Commit("dev", {"a": "2"}, "two")]
    )
    ours = tmp_path / "cache.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(remote), str(ours)], check=True)

    assert add_note(Git(ours), str(remote), first, SHA) is True
    other = tmp_path / "other.git"  # another writer notes the second commit in its own clone
    subprocess.run(["git", "clone", "-q", "--bare", str(remote), str(other)], check=True)
    assert add_note(Git(other), str(remote), second, "f" * 40) is True
    assert add_note(Git(ours), str(remote), first, SHA) is False  # there already: nothing pushed

    shown = subprocess.run(
        ["git", "-C", str(remote), "notes", f"--ref={NOTES_REF}", "list"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert {line.split()[1] for line in shown.splitlines()} == {first, second}
    assert (read_note(Git(remote), first), read_note(Git(remote), second)) == (SHA, "f" * 40)
    assert read_note(Git(remote), "0" * 40) is None
