"""Library side of the subcommands: each returns plain data for :mod:`pylogctl.formatters`."""
