"""The language server (``kubelint-ml lsp``): see docs/editors.md. Its protocol library is imported
only when the server starts."""

from __future__ import annotations

import click


@click.command("lsp")
@click.option("--stdio", is_flag=True, help="Talk over standard input and output (the default and only transport).")
def lsp(stdio: bool) -> None:
    """Language server for editors: diagnostics, quick fixes, fix all and hover, over stdio."""
    try:
        from kubelint_ml.lsp.server import main
    except ImportError as e:  # pygls missing from a trimmed install
        raise click.ClickException(f"the language server needs pygls: {e}") from None
    main()
