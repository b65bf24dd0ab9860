"""The command line: the click group and its error boundary (main), one module per command (commands/), GitHub Actions output (actions_output) and the demo."""
