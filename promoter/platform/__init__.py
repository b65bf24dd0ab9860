"""The platform GitOps repo: git object math, provenance, tree plans, the fast-import writer, the cached repo, checks of a rendered tree."""
