"""The CLI's shell completions and man pages, generated from the live click command tree
(``python -m pylogctl.cli.gen_docs``): :mod:`.command_tree` reads the commands, options and
values once, :mod:`.completion_scripts` and :mod:`.man_pages` render them, :mod:`.generate`
writes or checks the files. Only the generator uses these; the CLI never imports them.
"""
