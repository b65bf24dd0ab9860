"""The workflows ``promoter init`` writes: on main (promote on push, promote by hand, the render
check) and on every environment branch (the scheduling flow on push, the render check). Pure text;
``promoter init --promoter-repo your-org/promoter --ref 000...0 --tag v0.1.0`` writes exactly the
files under ``examples/`` (tests/cli/test_init.py holds the two together).

Every value written here was checked by ``promoter init`` first (a GitHub ``owner/name``, a full
SHA or a tag, DNS-1123 environment names, a plain branch name), so nothing needs YAML quoting and
nothing reaches an expression or a shell as anything but data."""

from __future__ import annotations

from dataclasses import dataclass

from promoter.ghactions.heartbeat import ARMED, CRONS, HOURLY, IDLE, SIX_HOURLY

CHECKOUT = "actions/checkout@08c6903cd8c0fde910a37f88322edcfb5dd907a8 # v5.0.0"


Follows = tuple[tuple[str, tuple[str, ...]], ...]


def upstreams_of(environments: tuple[str, ...], follows: Follows) -> dict[str, tuple[str, ...]]:
    """What each environment follows: as given, else the environment listed before it."""
    given = dict(follows)
    return {e: given.get(e, (environments[i - 1],) if i else ()) for i, e in enumerate(environments)}


def leaves_of(environments: tuple[str, ...], follows: Follows) -> tuple[str, ...]:
    """The environments nothing follows (the last one of a list)."""
    followed = {u for ups in upstreams_of(environments, follows).values() for u in ups}
    return tuple(e for e in environments if e not in followed)


@dataclass(frozen=True)
class Setup:
    """What the workflows depend on."""

    promoter_repo: str  # owner/name of the team's copy
    ref: str  # a full commit SHA (or a tag)
    tag: str | None  # the tag of that SHA, written as a comment after each pin
    environments: tuple[str, ...]  # in promotion order
    main_branch: str = "main"
    auth: str = "app"  # app | token
    private_promoter: bool = False
    env_branches: tuple[str, ...] = ()  # each environment's control-plane branch (default: its name)
    follows: Follows = ()  # what an environment follows, where not the one listed before it

    @property
    def branches(self) -> tuple[str, ...]:
        return self.env_branches or self.environments

    def upstreams(self, name: str) -> tuple[str, ...]:
        """What ``name`` follows: as given, else the environment listed before it."""
        return upstreams_of(self.environments, self.follows)[name]

    @property
    def last(self) -> str:
        """The environments nothing follows, comma-separated: the ones held for approval."""
        return ",".join(leaves_of(self.environments, self.follows))

    @property
    def order(self) -> str:
        """The promotion order for the comments: ``dev -> qa -> prod``, or each with what it follows."""
        if not self.follows:
            return " -> ".join(self.environments)
        return ", ".join(
            f"{e} (after {' and '.join(self.upstreams(e))})" if self.upstreams(e) else e
            for e in self.environments
        )

    def environment_of(self, branch: str) -> str:
        return self.environments[self.branches.index(branch)]

    def pin(self, path: str) -> str:
        comment = f" # {self.tag}" if self.tag else ""
        return f"{self.promoter_repo}/{path}@{self.ref}{comment}"


_BLOCKS = (
    "PROMOTER_NOTIFICATIONS_ENV: ${{ secrets.PROMOTER_NOTIFICATIONS_ENV }} # receivers' NAME=value lines, if any",
    "PROMOTER_GATES_ENV: ${{ secrets.PROMOTER_GATES_ENV }} # gates' and the hub's NAME=value lines, if any",
)
SECRETS = {
    "app": (
        "PROMOTER_GITHUB_APP_ID: ${{ secrets.PROMOTER_GITHUB_APP_ID }}",
        "PROMOTER_GITHUB_APP_PRIVATE_KEY: ${{ secrets.PROMOTER_GITHUB_APP_PRIVATE_KEY }}",
        *_BLOCKS,
    ),
    "token": ("PROMOTER_GITHUB_TOKEN: ${{ secrets.PROMOTER_GITHUB_TOKEN }}", *_BLOCKS),
}
RENDER_AUTH = {
    "app": (
        "# the promoter mints its own installation tokens, limited to the platform repo and this one",
        "app-id: ${{ secrets.PROMOTER_GITHUB_APP_ID }}",
        "app-private-key: ${{ secrets.PROMOTER_GITHUB_APP_PRIVATE_KEY }}",
    ),
    "token": (
        "# a token that can read the platform repo (the same secret the promotion uses)",
        "token: ${{ secrets.PROMOTER_GITHUB_TOKEN }}",
    ),
}


def _hosting(s: Setup) -> str:
    return (
        f"# {s.promoter_repo} is your team's copy of the promoter (a fork or a mirror) and the SHA is the\n"
        "# commit of the tag you vetted in it, the same SHA in `uses:` and promoter-ref; see\n"
        "# docs/github-actions.md#hosting-the-promoter for how to make the copy, find the SHA and check it.\n"
    )


def _flow(items: tuple[str, ...]) -> str:
    return f"[{', '.join(items)}]"


def _call(s: Setup, job: str, given: list[str], condition: tuple[str, ...] = ()) -> str:
    """A job calling the reusable workflow, with ``given`` as its first inputs."""
    extra = [f"main-branch: {s.main_branch}"] if s.main_branch != "main" else []
    extra += ["private-promoter: true"] if s.private_promoter else []
    inputs = [*given, *extra, f"promoter-repository: {s.promoter_repo}", f"promoter-ref: {s.ref}"]
    return (
        f"\njobs:\n  {job}:\n"
        + "".join(f"    {line}\n" for line in condition)
        + f"    uses: {s.pin('.github/workflows/promote.yml')}\n"
        "    permissions:\n"
        "      contents: read # check out the control plane\n"
        "      statuses: write # promoter/<env> statuses on the main commit\n"
        "    with:\n" + "".join(f"      {line}\n" for line in inputs) + "    secrets:\n"
        "" + "".join(f"      {line}\n" for line in SECRETS[s.auth])
    )


#: The heartbeat's crons, one per cadence (promoter/ghactions/heartbeat.py); the repository variable
#: that the runs set names the one that runs (docs/github-actions.md#the-heartbeat).
HEARTBEAT_VARIABLE = "PROMOTER_HEARTBEAT"
_V = f"vars.{HEARTBEAT_VARIABLE}"
#: A scheduled run gets no runner (nothing billed) unless it is the cron of the armed cadence.
ARMED_ONLY = (
    "# the heartbeat runs only while a promotion waits on time (a bake, a soak, a polled gate, a",
    "# window, a hold's end), at the cadence the runs set (Variables write: docs/github-actions.md#the-heartbeat)",
    "if: >-",
    "  github.event_name != 'schedule' || github.event.schedule == (",
    f"  {_V} == '{HOURLY}' && '{CRONS[HOURLY]}' || {_V} == '{SIX_HOURLY}' && '{CRONS[SIX_HOURLY]}'",
    f"  || {_V} != '{IDLE}' && '{CRONS[ARMED]}' || 'idle')",
)


def promote(s: Setup) -> str:
    last = s.last
    return (
        f"# A push to {s.main_branch} promotes that commit {s.order} (the promotion flow).\n"
        "# No run waits: each does what needs no waiting and ends, and the next event goes on from\n"
        "# there: a promoter-wake dispatch from the platform repo (a promotion PR merged, a cluster's\n"
        "# status) or the hub (a verdict), the heartbeat (only while a promotion waits on time, every 10\n"
        f"# minutes, hourly or every 6 hours as the next check is near: the variable {HEARTBEAT_VARIABLE}),\n"
        "# or a run by hand.\n"
        + _approval_comment(last)
        + _hosting(s)
        + f"name: promote\n\non:\n  push:\n    branches: [{s.main_branch}]\n"
        "  repository_dispatch:\n    types: [promoter-wake]\n"
        "  schedule: # the heartbeat: every 10 minutes, hourly, every 6 hours; only the armed one runs\n"
        + "".join(f'    - cron: "{CRONS[c]}"\n' for c in (ARMED, HOURLY, SIX_HOURLY))
        + "  workflow_dispatch:\n\npermissions: {}\n"
        + _call(s, "promote", ["commit: ${{ github.sha }}", f"hold-for-approval: {last}"], ARMED_ONLY)
    )


def _approval_comment(last: str) -> str:
    if "," not in last:
        return f"# {last} starts only after the GitHub Environment {last}'s reviewers approve (asked once).\n"
    names = last.split(",")
    listed = ", ".join(names[:-1]) + f" and {names[-1]}"
    return f"# {listed} each start only after the reviewers of the GitHub Environment of its name approve (asked once).\n"


def promote_by_hand(s: Setup) -> str:
    return (
        "# Promote a chosen commit to a chosen environment by hand (Actions tab -> promote by hand).\n"
        "# Without force the commit goes through every environment before the chosen one first (those\n"
        "# already done are skipped); with force it goes straight to the chosen environment.\n"
        + _hosting(s)
        + "name: promote by hand\n\non:\n  workflow_dispatch:\n    inputs:\n"
        "      to:\n"
        "        description: Promote up to and including this environment\n"
        "        type: choice\n"
        f"        options: {_flow(s.environments)}\n"
        "        required: true\n"
        "      commit:\n"
        f"        description: Main commit to promote (empty for the head of {s.main_branch})\n"
        "        type: string\n"
        '        default: ""\n'
        "      force:\n"
        "        description: Skip the guard and go straight to this environment\n"
        "        type: boolean\n"
        "        default: false\n"
        "      reason:\n"
        "        description: With force, why it passes a hold or a closed change window (recorded)\n"
        "        type: string\n"
        '        default: ""\n\npermissions: {}\n'
        + _call(
            s,
            "promote",
            [
                "to: ${{ inputs.to }}",
                "commit: ${{ inputs.commit }}",
                "force: ${{ inputs.force }}",
                "reason: ${{ inputs.reason }}",
                f"hold-for-approval: {s.last}",
            ],
        )
    )


def schedule(s: Setup) -> str:
    if s.branches == s.environments:
        same, which = "the branch names are the\n# environment names", "${{ github.ref_name }}"
    else:  # the pushed branch's environment, from a map written here (names checked: no quotes)
        pairs = ",".join(f'"{b}":"{e}"' for b, e in zip(s.branches, s.environments, strict=True))
        same, which = (
            "each branch maps to\n# its environment",
            f"${{{{ fromJSON('{{{pairs}}}')[github.ref_name] }}}}",
        )
    return (
        "# A push to an environment branch re-renders that environment alone, with the main commit\n"
        "# deployed there (the scheduling flow). GitHub runs the workflows of the pushed commit, so this\n"
        f"# file lives on every environment branch (the same file on each: {same}), and not on main,"
        " where a push to an environment branch never looks.\n"
        + _hosting(s)
        + f"name: schedule\n\non:\n  push:\n    branches: {_flow(s.branches)}\n\npermissions: {{}}\n"
        + _call(s, "schedule", [f"schedule: {which}", f"hold-for-approval: {s.last}"])
    )


def render(s: Setup) -> str:
    main = s.main_branch
    into_main = f"github.base_ref == '{main}'"
    into_env = f"github.base_ref != '{main}'"
    with_main = [f"main-branch: {main}"] if main != "main" else []
    steps = [
        f"- uses: {CHECKOUT}",
        "  with:",
        "    fetch-depth: 0 # main and every environment branch",
        "    persist-credentials: false",
        "- name: Render and diff",
        "  id: render",
        f"  uses: {s.pin('actions/render')}",
        "  with:",
        "    # into main: this change to main against every environment as it is;",
        "    # into an environment branch: that environment with the main commit deployed there",
        f"    commit: ${{{{ {into_main} && github.sha || '' }}}}",
        f"    environment-branch: ${{{{ {into_env} && github.base_ref || '' }}}}",
        f"    environment-commit: ${{{{ {into_env} && github.sha || '' }}}}",
        f"    deployed-main: ${{{{ {into_env} }}}}",
        *(f"    {line}" for line in with_main),
        *(f"    {line}" for line in RENDER_AUTH[s.auth]),
        "- name: Post the diff on the pull request",
        "  env:",
        "    GH_TOKEN: ${{ github.token }} # gh's token on github.com",
        "    GH_ENTERPRISE_TOKEN: ${{ github.token }} # and on a GitHub Enterprise Server",
        "    GH_REPO: ${{ github.repository }}",
        "    PR_NUMBER: ${{ github.event.pull_request.number }}",
        "    COMMENT_FILE: ${{ steps.render.outputs.comment-file }}",
        "  # update the comment of an earlier push, or add the first one; on this run's GitHub",
        "  # (GH_HOST: github.com, or the Enterprise Server's host)",
        "  run: |",
        '    export GH_HOST="${GITHUB_SERVER_URL#*://}"',
        '    gh pr comment "$PR_NUMBER" --edit-last --body-file "$COMMENT_FILE" \\',
        '      || gh pr comment "$PR_NUMBER" --body-file "$COMMENT_FILE"',
    ]
    return (
        "# Every pull request into main or an environment branch is rendered and diffed against the\n"
        "# platform branches; the diff is posted on the pull request. Nothing is pushed. GitHub runs the\n"
        "# workflows of the pull request's merge commit: this file is on main and, the same, on every\n"
        "# environment branch.\n" + _hosting(s) + "name: render\n\non:\n  pull_request:\n"
        f"    branches: {_flow((main, *s.branches))}\n\npermissions: {{}}\n\n"
        "jobs:\n  render:\n    runs-on: ubuntu-latest\n    permissions:\n"
        "      contents: read # check out the control plane\n"
        "      pull-requests: write # post the rendered diff as a comment\n"
        "    steps:\n" + "".join(f"      {line}\n" for line in steps)
    )


def for_main(s: Setup) -> dict[str, str]:
    """The workflows of the main branch, by path."""
    return {
        ".github/workflows/promote.yml": promote(s),
        ".github/workflows/promote-by-hand.yml": promote_by_hand(s),
        ".github/workflows/render.yml": render(s),
    }


def for_environment(s: Setup) -> dict[str, str]:
    """The workflows of every environment branch (the same on each), by path."""
    return {
        ".github/workflows/render.yml": render(s),
        ".github/workflows/schedule.yml": schedule(s),
    }
