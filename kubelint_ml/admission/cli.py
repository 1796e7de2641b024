"""``kubelint-ml serve`` and ``kubelint-ml export vap`` (registered in kubelint_ml/cli.py)."""

from __future__ import annotations

import re
import sys

import click

from kubelint_ml.clitypes import FILE


class _Failure(click.ClickException):
    """The tool could not do what was asked: exit 2 (as kubelint_ml.cli's, which this module cannot import)."""

    exit_code = 2

    def show(self, file: object = None) -> None:
        click.echo(f"kubelint-ml: error: {self.format_message()}", err=True)


@click.command()
@click.option("--cert", required=True, type=FILE, help="TLS certificate (PEM, chain first).")
@click.option("--key", required=True, type=FILE, help="TLS private key (PEM).")
@click.option("--host", default="0.0.0.0", show_default=True, help="Address to listen on.")
@click.option("--port", default=8443, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option(
    "-c",
    "--config",
    "config_path",
    type=FILE,
    help="Config file [default: .kubelint-ml.yaml found upward from the current directory]; reloaded on change.",
)
@click.option(
    "--mode",
    type=click.Choice(("enforce", "audit")),
    default=None,
    help="enforce: error findings deny; audit: log and count only [default: the config's admission.mode, else enforce].",
)
@click.option(
    "--reload-interval",
    default=2.0,
    show_default=True,
    type=click.FloatRange(0.1, 3600),
    help="Seconds between checks of the config and certificate files for changes.",
)
def serve(
    cert: str, key: str, host: str, port: int, config_path: str | None, mode: str | None, reload_interval: float
) -> None:
    """Validating admission webhook: AdmissionReviews at POST /validate over HTTPS."""
    import ssl

    from kubelint_ml.admission.review import PolicyError, load_policy
    from kubelint_ml.admission.server import ServeOptions, setup_logging
    from kubelint_ml.admission.server import serve as run

    if config_path is None:
        from kubelint_ml.run.config import find_config

        found = find_config()
        config_path = str(found) if found else None
    try:
        policy = load_policy(config_path, mode)
    except PolicyError as e:
        raise _Failure(str(e)) from None
    try:  # a clear message now rather than a traceback from the server
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
    except (OSError, ValueError) as e:
        raise _Failure(f"--cert/--key: cannot load the certificate and key: {e}") from None
    setup_logging()
    opts = ServeOptions(
        cert=cert, key=key, host=host, port=port, config=config_path, mode=mode, reload_interval=reload_interval
    )
    sys.exit(run(opts, policy))


@click.group()
def export() -> None:
    """Write the rules in another engine's format."""


@export.command("vap")
@click.option(
    "-c",
    "--config",
    "config_path",
    type=FILE,
    help="Config file [default: .kubelint-ml.yaml found upward from the current directory].",
)
@click.option(
    "--audit",
    is_flag=True,
    help="Add Audit to every binding's validationActions (Deny and Warn stay): failures are also written to the "
    "API server's audit log.",
)
def export_vap(config_path: str | None, audit: bool) -> None:
    """ValidatingAdmissionPolicies and bindings (admissionregistration.k8s.io/v1) on stdout.

    Every rule that CEL can express exactly; the others are listed on stderr
    with the reason.
    """
    from kubelint_ml.admission.review import PolicyError, load_policy
    from kubelint_ml.admission.vap import ExportError, export_policies

    if config_path is None:
        from kubelint_ml.run.config import find_config

        found = find_config()
        config_path = str(found) if found else None
    try:
        policy = load_policy(config_path)
    except PolicyError as e:
        raise _Failure(str(e)) from None
    try:
        text, skipped = export_policies(policy, audit)
    except ExportError as e:
        raise _Failure(str(e)) from None
    finally:
        policy.retire()  # its policies' helper and engines, on their own thread
    sys.stdout.write(text)
    sys.stdout.flush()
    exported = len(set(re.findall(r"^    kubelint-ml\.io/rule: (.*)$", text, re.M)))
    policies = text.count("\nkind: ValidatingAdmissionPolicy\n")
    click.echo(
        f"kubelint-ml: {exported} rule(s) exported as {policies} policies; {len(skipped)} not exported, each with the reason "
        "in the comments at the top of the output",
        err=True,
    )
