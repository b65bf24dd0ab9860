"""The on-call's workflow ``promoter init`` writes on main: hold or release an environment (or one
wave of it) from the Actions tab, with a reason and an end, through the promoter's reusable
``hold.yml`` (docs/change-control.md#holds). A release wakes the promotion itself. Pure text, like
``workflows`` (whose checked values it shares)."""

from __future__ import annotations

from promoter.scaffold.workflows import SECRETS, Setup, _flow, _hosting


def hold(s: Setup) -> str:
    """``.github/workflows/hold.yml``: a form with command, environment, wave, reason and until."""
    extra = [f"main-branch: {s.main_branch}"] if s.main_branch != "main" else []
    inputs = [
        "command: ${{ inputs.command }}",
        "environment: ${{ inputs.environment }}",
        "wave: ${{ inputs.wave }}",
        "reason: ${{ inputs.reason }}",
        "until: ${{ inputs.until }}",
        *extra,
        f"promoter-repository: {s.promoter_repo}",
        f"promoter-ref: {s.ref}",
    ]
    form = (
        ("command", "hold, or release (which wakes the promotion)", "choice", "options: [hold, release]", "hold"),
        ("environment", "The environment", "choice", f"options: {_flow(s.environments)}", None),
        ("wave", "Only this wave (empty for the whole environment)", "string", "", '""'),
        ("reason", "Why (required to hold), shown wherever the hold is", "string", "", '""'),
        ("until", "Ends by itself at this time (ISO 8601) or after this duration (4h); empty for until released",
         "string", "", '""'),
    )  # fmt: skip
    lines = []
    for name, description, kind, more, default in form:
        lines += [f"      {name}:", f"        description: {description}", f"        type: {kind}"]
        lines += [f"        {more}"] if more else []
        lines += [f"        default: {default}"] if default is not None else ["        required: true"]
    return (
        "# Hold an environment (or one wave of it) so that no trigger promotes to it, or release it\n"
        "# (Actions tab -> hold or release). The hold is recorded on refs/promoter/holds of this repo,\n"
        "# with who, why and until when; a release sends promoter-wake, so the promotion goes on at\n"
        "# once, and a hold's end is a time the heartbeat is armed for (docs/change-control.md#holds).\n"
        + _hosting(s)
        + "name: hold or release\n\non:\n  workflow_dispatch:\n    inputs:\n"
        + "".join(f"{line}\n" for line in lines)
        + "\npermissions: {}\n\njobs:\n  hold:\n"
        f"    uses: {s.pin('.github/workflows/hold.yml')}\n"
        "    permissions:\n"
        "      contents: write # refs/promoter/holds and refs/promoter/notifications; a release's promoter-wake\n"
        "    with:\n"
        + "".join(f"      {line}\n" for line in inputs)
        + "    secrets:\n"
        + "".join(f"      {line}\n" for line in SECRETS[s.auth])
    )
