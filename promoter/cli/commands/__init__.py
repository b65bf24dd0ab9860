"""One module per subcommand; ``promoter.cli`` registers them."""
