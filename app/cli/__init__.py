"""The ``errata`` command: a thin shell over the same functions the service uses.

The user's commands come first; the maintainers' (mining, migrations) are ``errata admin``.
Each command imports what it needs when it runs: ``match`` and ``compute`` answer from a
snapshot of what answering needs (``answers.offline``) and load neither the settings, the database
code, the web stack nor the migrations, which cost most of their time. Problems go to stderr
as one line. Exit codes: 0 done, 1 nothing matched / the block fails a check / a record an
import refused, 2 a usage error (input that cannot be read as text, a value the service
refuses, an unknown record).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from app.answers.links import COMMANDS
from app.answers.offline import database, prepared, prepared_database
from app.cli.admin import admin_cli
from app.cli.printing import (
    FIXES_SHOWN,
    command,
    err,
    help_text,
    print_card,
    print_cards,
    usage_error,
)
from app.cli.reading import STANDARD_INPUT, read_paste, readable_files

cli = typer.Typer(
    help=help_text(
        """errata: known errors in JAX and Pallas tracebacks, matched and fixed.

        The maintainers' commands are under errata admin."""
    ),
    no_args_is_help=True,
)
cli.add_typer(admin_cli, name="admin", rich_help_panel="Maintainer commands")


@command(cli)
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    workers: Annotated[
        int, typer.Option(min=1, envvar="ERRATA_WORKERS", help="Worker processes.")
    ] = 1,
) -> None:
    """Serve errata's API and pages.

    The database is migrated first, and an empty one gets the seed records. With
    ERRATA_PREPARE_DATABASE=false the database is left as it is (a separate migration
    step owns it). Several workers share their metrics through PROMETHEUS_MULTIPROC_DIR
    (a fresh temporary folder unless set), emptied here before any worker starts.
    """
    run_server("app.main:create_app", host, port, workers)


def run_server(app_factory: str, host: str, port: int, workers: int) -> None:
    """Serve the app ``app_factory`` (``module:function``) builds, as ``errata serve`` does;
    the benchmarks serve the app with a calibration route through it."""
    import uvicorn

    from app.config import load_settings
    from app.observability.logs import configure_logging
    from app.observability.multiprocess import metrics_dir
    from app.records.seeding import prepare_database

    settings = load_settings()
    configure_logging(settings.log_level, settings.log_format)
    if settings.prepare_database:
        engine, factory = database(settings)
        prepare_database(settings, engine, factory)  # logs what it loaded
        engine.dispose()
    os.environ["ERRATA_PREPARE_DATABASE"] = "false"  # done once here, not in every worker
    with metrics_dir(workers):
        uvicorn.run(
            app_factory,
            factory=True,
            host=host,
            port=port,
            workers=workers,
            http="httptools",
            loop="uvloop",
            log_config=None,  # the app's JSON logging, set up in every worker
            log_level=settings.log_level.lower(),
            access_log=False,  # the app logs each request itself, with its request id
        )


@command(cli, "import")
def import_command(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders of records.")],
) -> None:
    """Import records into the database, each upserted by its id.

    Takes the JSON envelope, bare records, JSON arrays of either, JSON Lines and the text
    pages. Each file is one transaction: exit 1 when a record is refused (the others are
    imported). A file that is not text (not UTF-8, or binary) is a usage error, exit 2,
    before anything is imported.
    """
    from rich.progress import Progress

    from app.config import load_settings
    from app.migrate import upgrade
    from app.records.importer import ImportSummary, import_paths

    files = readable_files(paths)
    settings = load_settings()
    engine, factory = database(settings)
    upgrade(settings, engine)
    with Progress(console=err, transient=True, disable=len(files) < 2) as progress:
        task = progress.add_task("importing", total=len(files))

        def advance(path: Path, result: ImportSummary) -> None:
            for issue in result.issues:
                err.print(Text.assemble(("failed ", "red"), str(issue)))
            progress.advance(task)

        summary = import_paths(factory, files, on_file=advance)
    typer.echo(
        f"added {summary.added}, updated {summary.updated}, "
        f"unchanged {summary.unchanged}, failed {summary.failed}"
    )
    engine.dispose()
    if summary.failed:
        raise typer.Exit(code=1)


@command(cli)
def show(
    key: Annotated[str, typer.Argument(help="A record's slug or id.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the record as the API serves it.")
    ] = False,
) -> None:
    """Explain one record: what the error means, and errata's example fix.

    Takes a record's id or slug; --json prints the record as the API serves it.
    """
    from app.answers.cards import record_answer
    from app.answers.record_text import find_record
    from app.config import load_settings
    from app.errors import NotFound, SharedSlug
    from app.records.store import MAX_PAGE_SIZE, RecordFilters, RecordStore

    engine, factory = prepared_database(load_settings())
    try:
        with factory() as session:
            store = RecordStore(session)
            try:
                row = find_record(store, key)
            except NotFound as exc:
                usage_error(exc.detail)
            except SharedSlug:
                page = store.search(RecordFilters(slug=key), limit=MAX_PAGE_SIZE, cursor=None)
                listed = "".join(f"\n  {row.id}  {row.error_message}" for row in page.rows)
                more = f"\n  … and {page.total - len(page.rows)} more" if page.next_cursor else ""
                usage_error(
                    f"{page.total} records share the slug {key!r}; show one by its id:"
                    f"{listed}{more}"
                )
            if as_json:
                from app.api.records import envelope

                document = envelope(row).model_dump(exclude_unset=True)
                typer.echo(json.dumps(document, indent=2))
                return
            print_card(record_answer(row.document, store.annotation(row.id), COMMANDS))
    finally:
        engine.dispose()


@command(cli)
def match(
    source: Annotated[
        str, typer.Argument(help="A file with the paste, or - for stdin.")
    ] = STANDARD_INPUT,
    as_json: Annotated[bool, typer.Option("--json", help="Print the API's JSON answer.")] = False,
    jax_version: Annotated[
        str | None, typer.Option(help="The JAX version that printed it.")
    ] = None,
) -> None:
    """Find the known errors in a pasted traceback.

    Reads a file, or standard input. Prints each error with its values and fixes, the site in
    JAX's source, a compiler's message, a memory report: exit 1 when the answer names none of
    them. Input that is not UTF-8 text (binary data, NUL bytes) is a usage error, exit 2.
    """
    from app.answers.compute import checked_jax_version
    from app.answers.offline import match_here
    from app.errors import ProblemError

    try:
        checked_jax_version(jax_version, "--jax-version", modelled=False)
    except ProblemError as exc:
        usage_error(exc.detail)
    text = read_paste(source)
    try:
        # Its answers' links are the commands that show the same.
        answer = match_here(prepared(), text, jax_version, COMMANDS)
    except ProblemError as exc:
        usage_error(exc.detail)
    if as_json:
        typer.echo(answer.model_dump_json(indent=2))
    else:
        print_cards(answer.answers, max_fixes=FIXES_SHOWN)
    if not (answer.matches or answer.compilerMessages or answer.memory or answer.raisePoints):
        raise typer.Exit(code=1)


@command(cli)
def compute(
    operation: Annotated[str, typer.Option(help="The construct, e.g. copy_gmem_to_smem.")],
    shape: Annotated[str, typer.Option(help="The block's shape: 7, (8, 128), [8,128].")],
    dtype: Annotated[str, typer.Option(help="A numpy / ml_dtypes name, or as JAX prints it.")],
    target_dtype: Annotated[
        str | None, typer.Option(help="The dtype viewed as (smem_bitcast only).")
    ] = None,
    jax_version: Annotated[str | None, typer.Option(help="The JAX release, e.g. 0.10.2.")] = None,
    also_in: Annotated[
        str | None,
        typer.Option(help="Releases every fix must pass in too, e.g. 0.9.2,0.12.0.1."),
    ] = None,
    lowering_semantics: Annotated[
        str | None,
        typer.Option(help="Lane or Warpgroup; the release's default when unset."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the API's JSON answer.")] = False,
) -> None:
    """What JAX raises for a block, and the verified fixes.

    Exit 1 when the block fails in a release asked. The same service as POST /api/compute;
    the engine needs no database (the records are read, when there are any, to name the one
    documenting each error).
    """
    from pydantic import ValidationError

    from app.answers.cards import compute_answer
    from app.answers.compute import ComputeService
    from app.errors import ProblemError
    from app.rendering.text import validation_problem
    from app.schemas.compute import ComputeRequest

    try:
        request = ComputeRequest.model_validate(  # validated: the semantics is a choice
            {
                "operation": operation,
                "shape": shape,
                "dtype": dtype,
                "targetDtype": target_dtype,
                "jaxVersion": jax_version,
                "alsoJaxVersions": also_in or [],
                "loweringSemantics": lowering_semantics,
            }
        )
        answer = ComputeService(prepared().catalog).compute(request)
    except ValidationError as exc:
        usage_error(validation_problem(exc))
    except ProblemError as exc:
        usage_error(exc.detail)
    if as_json:
        typer.echo(answer.model_dump_json(indent=2))
    else:
        print_card(compute_answer(answer, COMMANDS))
    if not all(each.ok for each in answer.checkedIn):
        raise typer.Exit(code=1)


@command(
    cli,
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
def run(
    command: Annotated[list[str], typer.Argument(help="The command and its arguments.")],
) -> None:
    """Run a command, and explain the error it fails with: errata run -- python train.py

    Its output is passed through unchanged. When it fails, what errata knows of the error in
    its output follows on stderr, from the snapshot errata match reads, or from the server
    ERRATA_URL names. The exit code is the command's.
    """
    from app.cli.running import run_command

    raise typer.Exit(code=run_command(command))


@command(cli)
def mcp() -> None:
    """Serve errata's tools to a coding agent: the Model Context Protocol over stdio.

    Tools: explain_error, compute_fix, get_record, search_records. Answers are made here, from
    the snapshot errata match reads and the database errata show reads; no server is needed.
    """
    from app.agents.mcp_server import serve

    serve()


def main() -> None:
    cli()
