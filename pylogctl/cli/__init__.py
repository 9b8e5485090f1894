"""The command line: one module per subcommand, each only parsing options and rendering."""
