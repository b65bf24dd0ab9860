"""The Pipeline's ``signatures``: who signs the promotion commits, and whether the main commit
promoted must carry a valid signature (docs/security.md, "Signed and verified commits").

```yaml
signatures:
  commits: github     # git (default): as git config says; github: GitHub signs them (an App)
  verifyMain: git     # git: git's own verification; github: GitHub's (the control plane on GitHub)
```
"""

from __future__ import annotations

from typing import Literal

from promoter.controlplane.fields import Fields, kind_of

Signer = Literal["git", "github"]
SIGNERS: tuple[Signer, ...] = ("git", "github")
EXAMPLE = "{commits: github, verifyMain: git}"


def signatures_from(spec: Fields, forge: str) -> tuple[Signer, Signer | None]:
    """``spec.signatures`` of the Pipeline read by ``spec``: (who signs the promotion commits,
    who verifies the main commit or None); ``forge`` is the platform repo's (local or github)."""
    value = spec.get("signatures")
    if value is None:
        return "git", None
    if not isinstance(value, dict):
        spec.fail(f"must be a mapping, {EXAMPLE}, got {kind_of(value)}", "signatures")
    fields = spec.fields("signatures")
    assert fields is not None
    commits = _signer(fields, "commits") or "git"
    verify = _signer(fields, "verifyMain")
    fields.done()
    if commits == "github" and forge != "github":
        fields.fail(
            "github: GitHub signs only the commits it makes itself, and the platform repo is not on "
            "GitHub (platformRepo.forge is local); use git, which signs as git config asks",
            "commits",
        )
    return commits, verify


def _signer(fields: Fields, key: str) -> Signer | None:
    value = fields.str(key)
    if value is None:
        return None
    if value not in SIGNERS:
        fields.problem(key, f"must be git or github, got {value!r}")
    return "github" if value == "github" else "git"
