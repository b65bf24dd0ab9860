#!/usr/bin/env bash
# Runs the promoter ($PROMOTER) with this script's arguments for a composite action, and keeps the
# evidence of a crash in the job: the runner, and any file left on it, is gone after the job.
#
# On exit code 3 (an unexpected failure: a bug) the promoter has written its traceback, secrets
# masked, to a crash log in TMPDIR; this prints it into the job log in a collapsed group (with
# workflow commands stopped, so that no line of it is read as one), annotates the job with its
# last line, and names the failure in the step summary. Any other exit code is passed through.
set -uo pipefail

crashes="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/promoter-run.XXXXXX")"
TMPDIR="$crashes" "$PROMOTER" "$@"
status=$?
if [ "$status" -eq 3 ]; then
  for log in "$crashes"/promoter-crash-*.log; do
    [ -f "$log" ] || continue
    last="$(grep -v '^[[:space:]]*$' "$log" | tail -n 1)"
    escaped="${last//%/%25}"
    echo "::error title=promoter crashed::an unexpected failure, a bug in the promoter: ${escaped}"
    echo "::group::promoter crash: the traceback (secrets masked)"
    resume="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    echo "::stop-commands::$resume"
    cat "$log"
    echo "::$resume::"
    echo "::endgroup::"
    if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
      {
        echo "### promoter crashed"
        echo ""
        echo "An unexpected failure, a bug in the promoter; its traceback is in the job log, in the"
        echo "group *promoter crash*. The last line:"
        echo ""
        echo '```text'
        echo "$last"
        echo '```'
      } >>"$GITHUB_STEP_SUMMARY"
    fi
  done
fi
rm -rf "$crashes"
exit "$status"
