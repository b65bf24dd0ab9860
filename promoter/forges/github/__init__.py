"""The github forge: PRs, merges and statuses through PyGithub (forge), one retry and rate-limit policy (policy, api), App and token auth (auth), answer shapes (shapes), repository URLs (urls)."""
