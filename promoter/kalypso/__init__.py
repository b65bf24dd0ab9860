"""Kalypso's control planes, read as their users keep them and rendered with Kalypso's scheduling
semantics and layout, with no management cluster (docs/kalypso.md)."""
