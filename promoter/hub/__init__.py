"""The deployment observability hub (DESIGN section 10, docs/hub.md)."""
