# Lint the GitHub Actions workflows (ours and the examples) and the composite actions:
# actionlint with shellcheck, shellcheck on the actions' scripts, zizmor offline, and
# check-jsonschema's bundled schemas.
WORKFLOW_FILES := $(wildcard .github/workflows/*.yml examples/control-plane/.github/workflows/*.yml examples/environments/*/.github/workflows/*.yml examples/platform-repo/.github/workflows/*.yml)
ACTION_FILES := $(wildcard actions/*/action.yml)
ACTION_SCRIPTS := $(wildcard actions/*.sh scripts/*.sh)

extra-lint:: deps
	@command -v shellcheck >/dev/null || { echo "shellcheck is missing: bash scripts/deps/workflow-linters.sh" >&2; exit 1; }
	$(BIN)/actionlint -shellcheck=shellcheck -pyflakes= $(WORKFLOW_FILES)
	shellcheck $(ACTION_SCRIPTS)
	$(BIN)/zizmor --offline --quiet $(WORKFLOW_FILES) $(ACTION_FILES)
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows $(WORKFLOW_FILES)
	$(BIN)/check-jsonschema --builtin-schema vendor.github-actions $(ACTION_FILES)
