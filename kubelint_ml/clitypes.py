"""The click parameter types the commands share, made once.

Every ``click.Path`` looks its name up through gettext when it is made (a
search of the locale directories); made once here, that is two lookups at
start-up instead of one an option.
"""

from __future__ import annotations

import click

FILE = click.Path(dir_okay=False)  # a file (or "-" where the command reads standard input)
PATH = click.Path()  # a file or a directory
