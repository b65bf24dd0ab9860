"""Promotion: the flows, one environment (plan -> push -> land -> gates), landing by merge policy, statuses, rollback and the run report."""
