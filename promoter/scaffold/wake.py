"""The platform repo's workflow ``promoter init`` writes (docs/github-actions.md#waking-the-promotion):
every event there that ends a wait of the control plane's promotion (a promotion PR merged, the
hold label taken off one, a cluster's commit status) sends it ``promoter-wake``. Pure text, like
``workflows`` (whose checked values it shares)."""

from __future__ import annotations

from promoter.scaffold.workflows import Setup

#: The platform repo's workflow: the control plane named by a repository variable, checked.
WAKE_TARGET = (
    "- name: Name the control plane",
    "  id: target",
    "  env:",
    "    PROMOTER_CONTROL_PLANE: ${{ vars.PROMOTER_CONTROL_PLANE }}",
    "  run: |",
    '    if ! [[ "$PROMOTER_CONTROL_PLANE" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]]; then',
    '      echo "::error title=promoter::set the variable PROMOTER_CONTROL_PLANE to owner/name" >&2',
    "      exit 2",
    "    fi",
    '    echo "owner=${PROMOTER_CONTROL_PLANE%%/*}" >> "$GITHUB_OUTPUT"',
    '    echo "name=${PROMOTER_CONTROL_PLANE#*/}" >> "$GITHUB_OUTPUT"',
)
#: With an App: a token for the control plane alone, Contents write alone (a dispatch needs it).
WAKE_APP_TOKEN = (
    "- name: Mint a token that can dispatch to the control plane (Contents write, that repo only)",
    "  id: token",
    "  uses: actions/create-github-app-token@0f859bf9e69e887678d5bbfbee594437cb440ffe # v2.1.0",
    "  with:",
    "    app-id: ${{ secrets.PROMOTER_GITHUB_APP_ID }}",
    "    private-key: ${{ secrets.PROMOTER_GITHUB_APP_PRIVATE_KEY }}",
    "    owner: ${{ steps.target.outputs.owner }}",
    "    repositories: ${{ steps.target.outputs.name }}",
    "    permission-contents: write",
)
WAKE_IF = (
    "(github.event_name == 'pull_request' && github.event.pull_request.merged "
    "&& startsWith(github.event.pull_request.head.ref, 'promoter/'))\n"
    "      || (github.event_name == 'pull_request' && github.event.action == 'unlabeled' "
    "&& github.event.label.name == 'promoter/hold' "
    "&& startsWith(github.event.pull_request.head.ref, 'promoter/'))\n"
    "      || (github.event_name == 'status' && github.event.state != 'pending' "
    "&& vars.PROMOTER_WAKE_ON_STATUS != 'false')"
)
#: A status's wake first waits for the burst to end: until no status has come on the commit for
#: PROMOTER_SETTLE seconds (read with this job's token, Commit statuses read), at most
#: PROMOTER_SETTLE_MAX; statuses arriving meanwhile queue one job behind it (the rest cancelled).
WAKE_SETTLE = (
    '    if [ "$PROMOTER_EVENT" = status ]; then',
    "      end=$((SECONDS + PROMOTER_SETTLE_MAX))",
    '      while [ "$SECONDS" -lt "$end" ]; do',
    '        sleep "$PROMOTER_SETTLE"',
    "        newest=$(printf 'Authorization: Bearer %s\\n' \"$PROMOTER_READ_TOKEN\" | curl --silent --show-error \\",
    '          --fail --retry 3 --max-time 30 -H @- -H "Accept: application/vnd.github+json" \\',
    '          "$GITHUB_API_URL/repos/$GITHUB_REPOSITORY/commits/$PROMOTER_SHA/statuses?per_page=1" \\',
    '          | grep -o \'"updated_at": *"[^"]*"\' | head -n 1 | cut -d \'"\' -f 4) || newest=""',
    '        if [ -z "$newest" ] || [ $(($(date +%s) - $(date -d "$newest" +%s))) -ge "$PROMOTER_SETTLE" ]; then',
    "          break # quiet: the burst is over",
    "        fi",
    "      done",
    "    fi",
)
#: The dispatch: a plain request to this server's API ($GITHUB_API_URL: github.com's, or a GitHub
#: Enterprise Server's /api/v3, where ``gh api`` without a host would go to github.com), the token
#: on curl's standard input, never on its command line.
WAKE_REQUEST = (
    "  run: |",
    '    if ! [[ "$PROMOTER_SHA" =~ ^[0-9a-f]{40}$ ]]; then PROMOTER_SHA=""; fi',
    *WAKE_SETTLE,
    "    printf 'Authorization: Bearer %s\\n' \"$PROMOTER_TOKEN\" | curl --silent --show-error \\",
    "      --fail-with-body --retry 3 --retry-all-errors --max-time 30 -H @- \\",
    '      -H "Accept: application/vnd.github+json" -H "X-GitHub-Api-Version: 2022-11-28" \\',
    '      --data "{\\"event_type\\":\\"promoter-wake\\",\\"client_payload\\":'
    '{\\"event\\":\\"$PROMOTER_EVENT\\",\\"sha\\":\\"$PROMOTER_SHA\\"}}" \\',
    '      "$GITHUB_API_URL/repos/$PROMOTER_CONTROL_PLANE/dispatches"',
)
#: Seconds without a new status that end a burst, and the longest a status's wake waits for one.
SETTLE, SETTLE_MAX = 20, 240


def wake(s: Setup) -> str:
    """The platform repo's workflow: wakes the control plane's promotion when a promotion PR is
    merged and when a cluster's reconciler posts a status."""
    app = s.auth == "app"
    secret = "steps.token.outputs.token" if app else "secrets.PROMOTER_WAKE_TOKEN"
    steps = [
        *WAKE_TARGET,
        *(WAKE_APP_TOKEN if app else ()),
        "- name: Wake the promotion",
        "  env:",
        f"    PROMOTER_TOKEN: ${{{{ {secret} }}}}",
        "    PROMOTER_CONTROL_PLANE: ${{ vars.PROMOTER_CONTROL_PLANE }}",
        "    PROMOTER_EVENT: ${{ github.event_name }}",
        "    PROMOTER_SHA: ${{ github.event.pull_request.merge_commit_sha || github.event.sha }}",
        "    PROMOTER_READ_TOKEN: ${{ github.token }}",
        f"    PROMOTER_SETTLE: {SETTLE}",
        f"    PROMOTER_SETTLE_MAX: {SETTLE_MAX}",
        *WAKE_REQUEST,
    ]
    return (
        "# The platform repo's half of the wake-ups (docs/github-actions.md#waking-the-promotion): a\n"
        "# merged promotion PR (head promoter/<env>), the label promoter/hold taken off one (a release)\n"
        "# and a commit status (what Flux and Argo CD post on the environment branches) send a\n"
        "# promoter-wake dispatch to the control plane, whose promote\n"
        "# workflow goes on at once. Set the variable PROMOTER_CONTROL_PLANE (owner/name) here, and\n"
        "# PROMOTER_WAKE_ON_STATUS to false where no gate reads commit statuses (the hub wakes it).\n"
        "# GitHub runs a merged PR's workflow from its base branch and a status's from the default\n"
        "# branch: commit this same file to the default branch and to every environment branch.\n"
        "name: promoter wake\n\non:\n  pull_request:\n    types: [closed, unlabeled]\n"
        "  status:\n\npermissions: {}\n\n"
        "# a burst is one wake: per event kind one job runs, one waits, and each newer event replaces\n"
        "# the waiting one (cancelled before it gets a runner: not billed); every wake does the same work\n"
        "concurrency:\n  group: promoter-wake-${{ github.event_name }}\n  cancel-in-progress: false\n\n"
        "jobs:\n  wake:\n"
        f"    if: >-\n      {WAKE_IF}\n"
        "    runs-on: ubuntu-latest\n    timeout-minutes: 5\n"
        "    permissions:\n"
        "      statuses: read # when the burst of statuses is over; the dispatch uses its own token\n"
        "    steps:\n" + "".join(f"      {line}\n" for line in steps)
    )


def for_platform(s: Setup) -> dict[str, str]:
    """The platform repo's workflows, by path: on its default branch and on every environment
    branch alike (a merged promotion PR runs the workflow of its base, an environment branch)."""
    return {".github/workflows/promoter-wake.yml": wake(s)}
