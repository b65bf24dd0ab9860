"""Forges: where promotion PRs and commit statuses live."""
