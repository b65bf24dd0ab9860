"""An environment's ``prChecks``: the promotion PR's own checks (check runs and commit statuses on
its head commit) that must pass before the promoter merges it.

```yaml
prChecks: {require: all}                          # every check on the PR
prChecks: {require: [kubeconform, "policy/*"]}    # the checks these names (or patterns) match
```
"""

from __future__ import annotations

from promoter.controlplane.fields import Fields, kind_of
from promoter.model import PRChecksRequire

EXAMPLE = '{require: all} or {require: [kubeconform, "policy/*"]}'


def pr_checks_from(f: Fields, merge: str) -> PRChecksRequire | None:
    """``prChecks`` of the environment read by ``f`` (None when absent); ``merge`` is its policy,
    which must open a PR for there to be checks on one."""
    value = f.get("prChecks")
    if value is None:
        return None
    if not isinstance(value, dict):
        f.fail(f"must be a mapping, {EXAMPLE}, got {kind_of(value)}", "prChecks")
    checks = f.fields("prChecks")
    assert checks is not None
    require = _require(checks)
    checks.done()
    if merge == "direct":
        f.fail(
            "merge: direct pushes with no PR, so there are no PR checks to require; "
            "use merge: auto (or manual), or remove prChecks",
            "prChecks",
        )
    return require


def _require(checks: Fields) -> PRChecksRequire:
    """``all``, or a non-empty list of check names and patterns, each once."""
    value = checks.get("require", (str, list), required=True)
    if isinstance(value, str):
        if value != "all":
            checks.fail(
                f"must be all or a list of check names (or patterns), got {value!r}; "
                f"one name is a list of one: [{value}]",
                "require",
            )
        return "all"
    names = checks.strings("require") or []
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        checks.fail(f"{twice!r} is listed twice", "require")
    return tuple(names)
