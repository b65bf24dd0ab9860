"""What an unknown flag most likely meant: by meaning first (the words people reach for, from
other tools and from promoter's own docs), then by spelling (click's own guesses), where a guess
that only a Kalypso control plane reads says so (docs/cli.md, "Errors")."""

from __future__ import annotations

#: What ``--environment`` and its kin mean to each command: the flag that does it.
_ENVIRONMENT = {
    "promote": "--to ENV (promote up to and including ENV) or --schedule ENV (re-render ENV alone)",
    "diff": "--env NAME (or --to NAME: every environment up to it)",
    "render": "--env ENV",
    "rollback": "--env ENV",
    "hold": "the environment as the argument: promoter hold ENV --reason TEXT",
    "release": "the environment as the argument: promoter release ENV",
}
_MEANINGS: dict[str, dict[str, str]] = {
    **{
        flag: _ENVIRONMENT
        for flag in ("--environment", "--target", "--stage", "--env-name", "--environment-name")
    },
    "--sha": {c: "--commit SHA" for c in ("promote", "diff", "render", "validate", "status", "graph")},
    "--ref": {c: "--commit REF" for c in ("promote", "diff", "render", "validate", "status", "graph")},
    "--repo": {
        c: "--control-plane DIR" for c in ("promote", "diff", "render", "validate", "status", "graph")
    },
    "--path": {
        c: "--control-plane DIR" for c in ("promote", "diff", "render", "validate", "status", "graph")
    },
    "--message": {"hold": "--reason TEXT", "promote": "--reason TEXT, with --force"},
    "--comment": {"hold": "--reason TEXT"},
    "--for": {"hold": "--until TIME (a time, or a duration such as 4h)"},
    "--duration": {"hold": "--until TIME (a time, or a duration such as 4h)"},
    "--dryrun": {c: "--dry-run" for c in ("promote", "rollback", "hold", "release", "rehearse")},
    "--json": {
        c: "-o json" for c in ("promote", "diff", "render", "validate", "status", "graph", "rollback")
    },
    "--format": {
        c: "-o text|json|yaml" for c in ("promote", "diff", "render", "validate", "status", "graph")
    },
}
#: Flags that only a Kalypso control plane reads: a guess by spelling says so.
KALYPSO_ONLY = frozenset(
    {"--environments", "--environments-file", "--kalypso-generation", "--kalypso-lenient"}
)


def by_meaning(command: str, flag: str) -> str | None:
    """The flag ``command`` has for what ``flag`` means elsewhere, or None."""
    return _MEANINGS.get(flag.split("=", 1)[0], {}).get(command)


def unknown_flag(command: str, flag: str, by_spelling: list[str]) -> str:
    """The message for an unknown ``flag`` of ``command``."""
    meant = by_meaning(command, flag)
    if meant is not None:
        return f"no such option {flag}: did you mean {meant}?"
    if not by_spelling:
        return f"no such option {flag}"
    guesses = [f"{g} (a Kalypso control plane's)" if g in KALYPSO_ONLY else g for g in sorted(by_spelling)]
    return f"no such option {flag}: did you mean {' or '.join(guesses)}?"
