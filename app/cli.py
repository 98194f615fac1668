"""The ``errata`` command: a thin shell over the same functions the service uses."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Annotated

import typer
import uvicorn
from rich.console import Console
from rich.progress import Progress

from app.api.records import envelope
from app.config import Settings, load_settings
from app.db import make_engine, make_session_factory
from app.errors import NotFound, ProblemError
from app.knowledge.mining import MINED_RULES, MINED_SITES, mine_one, mine_releases
from app.knowledge.scope import SourceTreeError
from app.matching.frames import FRAME_INDEX_FILE, write_frame_index
from app.migrate import upgrade
from app.observability.logs import configure_logging
from app.observability.multiprocess import metrics_dir
from app.records.importer import ImportSummary, expand_paths, import_paths
from app.records.seeding import prepare_database
from app.records.store import RecordStore
from app.records.version_watch import VersionWatch
from app.services.catalog import CatalogCache
from app.services.match import MatchRequest, MatchResponse, MatchService

cli = typer.Typer(help="errata: known errors, matched and fixed.", no_args_is_help=True)
db_cli = typer.Typer(help="Database maintenance.", no_args_is_help=True)
cli.add_typer(db_cli, name="db")
err = Console(stderr=True)


def _database(settings: Settings):  # type: ignore[no-untyped-def]
    engine = make_engine(settings.resolved_database_url)
    return engine, make_session_factory(engine)


@cli.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    workers: Annotated[
        int, typer.Option(min=1, envvar="ERRATA_WORKERS", help="Worker processes.")
    ] = 1,
) -> None:
    """Migrate, load the seed records into an empty database, then serve.

    With ERRATA_PREPARE_DATABASE=false the database is left as it is (a separate migration
    step owns it). Several workers share their metrics through PROMETHEUS_MULTIPROC_DIR
    (a fresh temporary folder unless set), emptied here before any worker starts.
    """
    settings = load_settings()
    configure_logging(settings.log_level, settings.log_format)
    if settings.prepare_database:
        engine, factory = _database(settings)
        prepare_database(settings, engine, factory)  # logs what it loaded
        engine.dispose()
    os.environ["ERRATA_PREPARE_DATABASE"] = "false"  # done once here, not in every worker
    with metrics_dir(workers):
        uvicorn.run(
            "app.main:create_app",
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


@cli.command("import")
def import_command(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders of records.", exists=True)],
) -> None:
    """Import records (JSON envelope, bare record, arrays, JSON Lines, text pages); upsert by id."""
    settings = load_settings()
    engine, factory = _database(settings)
    upgrade(settings, engine)
    files = expand_paths(paths)
    with Progress(console=err, transient=True, disable=len(files) < 2) as progress:
        task = progress.add_task("importing", total=len(files))

        def advance(path: Path, result: ImportSummary) -> None:
            for issue in result.issues:
                err.print(f"[red]failed[/red] {issue}", highlight=False)
            progress.advance(task)

        summary = import_paths(factory, files, on_file=advance)
    typer.echo(
        f"added {summary.added}, updated {summary.updated}, "
        f"unchanged {summary.unchanged}, failed {summary.failed}"
    )
    engine.dispose()
    if summary.failed:
        raise typer.Exit(code=1)


@cli.command()
def show(record_id: Annotated[str, typer.Argument(help="A record id.")]) -> None:
    """Print one record as the API serves it."""
    settings = load_settings()
    engine, factory = _database(settings)
    with factory() as session:
        try:
            row = RecordStore(session).get(record_id)
        except NotFound as exc:
            err.print(exc.detail)
            raise typer.Exit(code=1) from None
        typer.echo(json.dumps(envelope(row).model_dump(exclude_unset=True), indent=2))
    engine.dispose()


@cli.command()
def match(
    source: Annotated[str, typer.Argument(help="A file with the paste, or - for stdin.")] = "-",
    as_json: Annotated[bool, typer.Option("--json", help="Print the API's JSON answer.")] = False,
    jax_version: Annotated[
        str | None, typer.Option(help="The JAX version that printed it.")
    ] = None,
) -> None:
    """Find the known errors in a pasted traceback; exit 1 when nothing matches."""
    text = sys.stdin.read() if source == "-" else Path(source).read_text(errors="replace")
    settings = load_settings()
    engine, factory = _database(settings)
    prepare_database(settings, engine, factory)
    try:
        catalog = CatalogCache(factory, VersionWatch()).current()
        answer = MatchService(catalog).match(MatchRequest(text=text or " ", jaxVersion=jax_version))
    except ProblemError as exc:
        err.print(exc.detail)
        raise typer.Exit(code=2) from None
    finally:
        engine.dispose()
    typer.echo(answer.model_dump_json(indent=2) if as_json else describe_matches(answer))
    if not answer.matches:
        raise typer.Exit(code=1)


def describe_matches(answer: MatchResponse) -> str:
    """The answer as a person reads it in a terminal."""
    if not answer.matches:
        lines = ["No known error found."]
        lines += [f"  similar: {s.errorId}  {s.errorMessage}" for s in answer.suggestions]
        return "\n".join(lines)
    lines = []
    for found in answer.matches:
        values = found.values
        lines.append(
            f"{found.errorId}  {found.rule or ''}  score {found.score}  line {found.lineNumber}"
        )
        lines.append(f"  {found.matchedLine.strip()}")
        if values.shape is not None or values.dtype is not None:
            lines.append(f"  values: shape={values.shape} dtype={values.dtype}")
        if found.fix is None:
            lines.append(f"  no fix: {found.fixUnavailable}")
            continue
        if found.fix.firstViolation is not None:
            lines.append(f"  JAX says: {found.fix.firstViolation.message}")
        for fix in found.fix.fixes[:3]:
            lines.append(f"  fix ({fix.kind}, +{fix.addedBytes:g} bytes): {fix.code.after}")
    return "\n".join(lines)


@db_cli.command("upgrade")
def db_upgrade(
    seed: Annotated[
        bool, typer.Option(help="Also load the seed records into an empty store.")
    ] = False,
) -> None:
    """Apply every pending migration."""
    settings = load_settings()
    engine, factory = _database(settings)
    if seed:
        prepare_database(settings, engine, factory)
    else:
        upgrade(settings, engine)
    engine.dispose()
    typer.echo("database is at the newest revision")


@cli.command()
def mine(
    source: Annotated[Path, typer.Argument(help="A JAX checkout, or an installed jax package.")],
    version: Annotated[str, typer.Option(help="The JAX release it is, e.g. 0.10.2.")],
    commit: Annotated[
        str | None, typer.Option(help="Its commit (default: from data/jax-releases.json).")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write here, not to stdout.")] = None,
    history: Annotated[
        Path | None, typer.Option(help="A mined dataset to link this release into.")
    ] = None,
) -> None:
    """Mine every error site of one JAX release into records (JSON Lines)."""
    try:
        with _output(out) as stream:
            count = mine_one(source, version, commit, stream, history=history)
    except (SourceTreeError, ValueError) as exc:
        err.print(str(exc))
        raise typer.Exit(code=2) from None
    err.print(f"{count} records and annotations")


@cli.command("mine-releases")
def mine_releases_command(
    git_dir: Annotated[Path, typer.Argument(help="A git repository of jax-ml/jax with its tags.")],
    out: Annotated[Path, typer.Option(help="The dataset to write.")] = MINED_SITES,
    rules_out: Annotated[Path, typer.Option(help="The lowering rules to write.")] = MINED_RULES,
) -> None:
    """Mine every release of data/jax-releases.json, oldest first, into one dataset."""
    with _output(out) as stream:
        tracks = mine_releases(git_dir, stream, rules_out=rules_out)
    frames_out = rules_out.with_name(FRAME_INDEX_FILE.name)
    write_frame_index(out, frames_out)
    err.print(
        f"{len(tracks)} sites in {out}; lowering rules in {rules_out}; frames in {frames_out}"
    )


@contextmanager
def _output(path: Path | None) -> Iterator[IO[str]]:
    if path is None:
        yield sys.stdout
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8") as stream:
        yield stream
    partial.replace(path)


def main() -> None:
    cli()
