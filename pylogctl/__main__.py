from pylogctl.cli.app import main

main()
