#!/usr/bin/env python
"""Django's command-line utility (an installed wheel has the same as the ``hedgelab`` command)."""
from config.command_line import main

if __name__ == "__main__":
    main()
