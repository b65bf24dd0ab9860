"""The command line and nothing else: the click group and its one error boundary (``main``),
the output formats (``output``: ``-o text|json|yaml``; ``table``: a run's table on a terminal),
the unknown-flag guesses (``suggest``) and one module per command (``commands/``), each a thin
call into the library: options, arguments and printing here, the work in the packages below.

May import: every other package of promoter; nothing imports it but ``promoter.__main__``."""
