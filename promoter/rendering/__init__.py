"""Pure rendering: templates and assignments in, files out; the sandbox, the memo and the forked worker beside it."""
