"""Where ``promoter init`` writes and what: the target folder and its branches, every file of
each branch (main's workflows and the on-call's form, an environment branch's, a skeleton's, the
platform repo's wake-up), and the writer: all the files or, when one exists with other content
and nothing forces it, none."""

from __future__ import annotations

from pathlib import Path

from promoter.errors import UsageError
from promoter.gitcmd import Git
from promoter.scaffold import oncall, skeleton, wake, workflows
from promoter.scaffold.workflows import Setup

#: The on-call's form on main: hold or release (promoter/scaffold/oncall.py).
HOLD_WORKFLOW = ".github/workflows/hold.yml"
#: Where ``--out`` puts the platform repo's workflow.
PLATFORM_FOLDER = "platform-repo"


def target(out: str | None, branch: str | None, setup: Setup) -> tuple[Path, list[str]]:
    """The folder to write into, and the branches whose files go there."""
    every = [setup.main_branch, *setup.branches]
    if branch is not None and branch not in every:
        raise UsageError(
            f"--branch {branch!r}: neither {setup.main_branch} nor an environment's ({', '.join(setup.branches)})"
        )
    if out is not None:
        return Path(out), [branch] if branch else every
    return _working_tree(branch, setup, every)


def _working_tree(branch: str | None, setup: Setup, every: list[str]) -> tuple[Path, list[str]]:
    """The working tree's top and its checked-out branch (or ``branch``)."""
    git = Git(".")
    top = git.run("rev-parse", "--show-toplevel", check=False)
    if top.returncode != 0:
        raise UsageError(
            "the working directory is not in a git working tree: run init in your control-plane clone, or give --out DIR"
        )
    if branch is None:
        head = git.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False).stdout.decode().strip()
        if head not in every:
            raise UsageError(
                f"the checked-out branch {head or '(detached HEAD)'!r} is neither {setup.main_branch} nor an "
                f"environment's ({', '.join(setup.branches)}): check one out, or give --branch or --out"
            )
        branch = head
    return Path(top.stdout.decode().strip()), [branch]


def files_of(
    setup: Setup, branches: list[str], with_skeleton: bool, platform_repo: str, nested: bool
) -> dict[str, str]:
    """Every file of ``branches``, by path under the target (``nested``: a folder per branch);
    ``with_skeleton``: a starter control plane's too."""
    files: dict[str, str] = {}
    for branch in branches:
        mine = _branch_files(setup, branch, with_skeleton, platform_repo)
        files |= {(f"{branch}/{path}" if nested else path): text for path, text in mine.items()}
    if nested:  # the platform repo's wake-up workflow, beside the control plane's branches
        files |= {f"{PLATFORM_FOLDER}/{p}": text for p, text in wake.for_platform(setup).items()}
    return files


def _branch_files(setup: Setup, branch: str, with_skeleton: bool, platform_repo: str) -> dict[str, str]:
    if branch == setup.main_branch:
        mine = workflows.for_main(setup) | {HOLD_WORKFLOW: oncall.hold(setup)}
        if with_skeleton:
            mine |= skeleton.for_main(setup.environments, platform_repo, setup.follows)
        return mine
    mine = workflows.for_environment(setup)
    if with_skeleton:
        mine |= skeleton.for_environment(setup.environment_of(branch))
    return mine


def write(root: Path, files: dict[str, str], force: bool) -> list[tuple[str, str]]:
    """Write ``files`` under ``root``: all of them, or (a file exists with other content and no
    --force) none. Each path with its state: wrote, unchanged or replaced."""
    states = [(path, _state(root / path, text)) for path, text in files.items()]
    clash = [p for p, s in states if s == "replaced"]
    if clash and not force:
        raise UsageError(
            f"{root / clash[0]} exists with other content ({len(clash)} file{'s' if len(clash) > 1 else ''}); "
            "nothing written: --force replaces them"
        )
    _commit(root, {p: files[p] for p, state in states if state != "unchanged"})
    return states


def _state(target: Path, text: str) -> str:
    """What writing ``text`` to ``target`` does: wrote (new), unchanged or replaced."""
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise UsageError(f"{target}: exists and is not a regular file; nothing written")
    if not target.exists():
        return "wrote"
    return "unchanged" if target.read_text(errors="replace") == text else "replaced"


def _commit(root: Path, files: dict[str, str]) -> None:
    """Write every file beside its place first, then move them all in: a folder that cannot be
    written leaves nothing behind but the folders made."""
    staged: list[tuple[Path, Path]] = []
    try:
        for path, text in files.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            temp = target.with_name(f".{target.name}.promoter-init")
            staged.append((temp, target))
            temp.write_text(text)
    except OSError as err:
        for temp, _ in staged:
            temp.unlink(missing_ok=True)
        raise UsageError(f"{err.filename or root}: cannot write ({err.strerror}); nothing written") from err
    for temp, target in staged:
        temp.replace(target)
