"""The ``errata`` command: a thin shell over the same functions the service uses.

Each command imports what it needs when it runs: ``match``, ``compute`` and ``show`` load
neither the web stack nor the migrations, which cost most of their time. Output is coloured
on a terminal and plain when piped (rich decides); problems go to stderr as one line.
Exit codes: 0 done, 1 nothing matched / the block fails a check / an import failed, 2 a
usage error (a file that cannot be read, a value the service refuses, an unknown record).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from app.config import Settings, load_settings
from app.knowledge.sources import DEFAULT_WHEELS
from app.rendering.links import Links

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlalchemy.orm import Session, sessionmaker

    from app.answers.catalog import Catalog
    from app.knowledge.sources import ReleaseSource
    from app.rendering.cards import Card

cli = typer.Typer(help="errata: known errors, matched and fixed.", no_args_is_help=True)
db_cli = typer.Typer(help="Database maintenance.", no_args_is_help=True)
MAINTAINERS = "Maintainer commands"  # --help lists them apart from the user's commands
cli.add_typer(db_cli, name="db", rich_help_panel=MAINTAINERS)
# soft_wrap: a long line stays one line when piped, for grep; markup off: pasted text and
# code are printed as they are, brackets and all.
out = Console(soft_wrap=True, highlight=False, markup=False)
err = Console(stderr=True, soft_wrap=True, highlight=False, markup=False)
FIXES_SHOWN = 3  # a match's fixes printed; its All fixes command lists every one
# The compute request's fields, as ``errata compute`` names its options.
_COMPUTE_OPTIONS = {
    "operation": "operation",
    "shape": "shape",
    "dtype": "dtype",
    "targetDtype": "target-dtype",
    "jaxVersion": "jax-version",
    "alsoJaxVersions": "also-in",
    "loweringSemantics": "lowering-semantics",
}


class _Commands(Links):
    """Where a card's links lead, as the commands that print the same in a terminal: a
    record's page is ``errata show``, the compute page's verdict (every fix) is
    ``errata compute`` with the same values; a link out of errata (JAX's source) stays."""

    def record(self, key: str) -> str:
        return f"errata show {shlex.quote(key)}"

    def compute(self, **fields: object) -> str:
        options = [
            f"--{_COMPUTE_OPTIONS[name]} {shlex.quote(str(value))}"
            for name, value in fields.items()
            if value is not None
        ]
        return " ".join(["errata compute", *options])


COMMANDS = _Commands(base="")
WheelsOption = Annotated[
    Path,
    typer.Option(help="Where the wheels of releases the git repository lacks are kept."),
]


def _database(settings: Settings) -> tuple[Engine, sessionmaker[Session]]:
    from app.db import make_engine, make_session_factory

    engine = make_engine(settings.resolved_database_url)
    return engine, make_session_factory(engine)


def _usage_error(message: str) -> NoReturn:
    err.print(Text.assemble(("errata: ", "bold red"), message))
    raise typer.Exit(code=2)


def _prepared_database(settings: Settings) -> tuple[Engine, sessionmaker[Session]]:
    """The database as it is, without loading the migrations, when errata prepared it before
    (it holds a record); a fresh one (no tables, or no record) is prepared first."""
    from sqlalchemy import select
    from sqlalchemy.exc import DBAPIError

    from app.records.models import RecordRow

    engine, factory = _database(settings)
    try:
        with factory() as session:
            if session.scalar(select(RecordRow.id).limit(1)) is not None:
                return engine, factory
    except DBAPIError:  # no tables yet
        pass
    from app.records.seeding import prepare_database

    prepare_database(settings, engine, factory)
    return engine, factory


def _catalog(settings: Settings) -> Catalog:
    """The records' catalog, as the service keeps it in memory."""
    from app.answers.catalog_cache import CatalogCache
    from app.records.version_watch import VersionWatch

    engine, factory = _prepared_database(settings)
    try:
        return CatalogCache(factory, VersionWatch()).current()
    finally:
        engine.dispose()


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
    run_server("app.main:create_app", host, port, workers)


def run_server(app_factory: str, host: str, port: int, workers: int) -> None:
    """Serve the app ``app_factory`` (``module:function``) builds, as ``errata serve`` does;
    the benchmarks serve the app with a calibration route through it."""
    import uvicorn

    from app.observability.logs import configure_logging
    from app.observability.multiprocess import metrics_dir
    from app.records.seeding import prepare_database

    settings = load_settings()
    configure_logging(settings.log_level, settings.log_format)
    if settings.prepare_database:
        engine, factory = _database(settings)
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


@cli.command("import")
def import_command(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders of records.", exists=True)],
) -> None:
    """Import records (JSON envelope, bare record, arrays, JSON Lines, text pages); upsert by id."""
    from rich.progress import Progress

    from app.migrate import upgrade
    from app.records.importer import ImportSummary, expand_paths, import_paths

    settings = load_settings()
    engine, factory = _database(settings)
    upgrade(settings, engine)
    files = expand_paths(paths)
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


@cli.command()
def show(
    key: Annotated[str, typer.Argument(help="A record's slug or id.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the record as the API serves it.")
    ] = False,
) -> None:
    """Explain one record: what the error means and errata's example fix (--json: the record)."""
    from app.errors import NotFound, SharedSlug
    from app.records.store import MAX_PAGE_SIZE, RecordFilters, RecordStore
    from app.rendering.cards import record_card
    from app.rendering.records import find_record

    engine, factory = _prepared_database(load_settings())
    try:
        with factory() as session:
            store = RecordStore(session)
            try:
                row = find_record(store, key)
            except NotFound as exc:
                _usage_error(exc.detail)
            except SharedSlug:
                page = store.search(RecordFilters(slug=key), limit=MAX_PAGE_SIZE, cursor=None)
                listed = "".join(f"\n  {row.id}  {row.error_message}" for row in page.rows)
                more = f"\n  … and {page.total - len(page.rows)} more" if page.next_cursor else ""
                _usage_error(
                    f"{page.total} records share the slug {key!r}; show one by its id:"
                    f"{listed}{more}"
                )
            if as_json:
                from app.api.records import envelope

                document = envelope(row).model_dump(exclude_unset=True)
                typer.echo(json.dumps(document, indent=2))
                return
            _print_card(record_card(row.document, store.annotation(row.id), COMMANDS))
    finally:
        engine.dispose()


@cli.command()
def match(
    source: Annotated[str, typer.Argument(help="A file with the paste, or - for stdin.")] = "-",
    as_json: Annotated[bool, typer.Option("--json", help="Print the API's JSON answer.")] = False,
    jax_version: Annotated[
        str | None, typer.Option(help="The JAX version that printed it.")
    ] = None,
) -> None:
    """Find the known errors in a pasted traceback; exit 1 when the answer names nothing: no
    known error, no site in JAX's source, no compiler's message, no memory report."""
    from app.answers.compute import checked_jax_version
    from app.answers.match import MatchService
    from app.errors import ProblemError
    from app.rendering.cards import match_cards
    from app.schemas.match import MatchRequest

    try:
        checked_jax_version(jax_version, "--jax-version", modelled=False)
    except ProblemError as exc:
        _usage_error(exc.detail)
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(errors="replace")
    except OSError as exc:
        _usage_error(f"cannot read {source}: {exc.strerror or exc}")
    try:
        catalog = _catalog(load_settings())
        answer = MatchService(catalog).match(MatchRequest(text=text or " ", jaxVersion=jax_version))
    except ProblemError as exc:
        _usage_error(exc.detail)
    if as_json:
        typer.echo(answer.model_dump_json(indent=2))
    else:
        _print_cards(match_cards(answer, catalog.records, COMMANDS), max_fixes=FIXES_SHOWN)
    if not (answer.matches or answer.compilerMessages or answer.memory or answer.raisePoints):
        raise typer.Exit(code=1)


@cli.command()
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
    """What JAX raises for a block, and the verified fixes; exit 1 when the block fails in
    a release asked.

    The same service as POST /api/compute; the engine needs no database (the records are
    read, when there are any, to name the one documenting each error).
    """
    from pydantic import ValidationError

    from app.answers.compute import ComputeService
    from app.errors import ProblemError
    from app.rendering.cards import compute_card
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
        answer = ComputeService(_catalog(load_settings())).compute(request)
    except ValidationError as exc:
        _usage_error(validation_problem(exc))
    except ProblemError as exc:
        _usage_error(exc.detail)
    if as_json:
        typer.echo(answer.model_dump_json(indent=2))
    else:
        _print_card(compute_card(answer, COMMANDS))
    if not all(each.ok for each in answer.checkedIn):
        raise typer.Exit(code=1)


def _print_cards(cards: list[Card], max_fixes: int | None = None) -> None:
    """Cards one after the other, a rule between two."""
    for number, card in enumerate(cards):
        if number:
            out.print()
            out.rule(style="dim")
            out.print()
        _print_card(card, max_fixes)


def _print_card(card: Card, max_fixes: int | None = None) -> None:
    """A card as prose for a terminal: what ``rustc --explain`` is to rustc's errors. At most
    ``max_fixes`` of its fixes (every one when None), and how many it leaves out."""
    from app.rendering.cards import fix_heading, hidden_fixes_note

    out.print(Text(card.title, style="bold"))
    if card.facts:
        out.print(
            Text(" · ").join(
                Text.assemble((f"{label}:", "dim"), " ", value) for label, value in card.facts
            )
        )
    for quote in card.quotes:
        out.print(Text.assemble("\n", (f"{quote.label}: ", "bold"), (quote.text, "cyan")))
        if quote.note:
            out.print(Text("  " + quote.note))
    for paragraph in card.text:
        out.print(Text("\n" + paragraph))
    shown = card.fixes if max_fixes is None else card.fixes[:max_fixes]
    for index, fix in enumerate(shown):
        out.print(Text.assemble("\n", (fix_heading(card, index), "bold green")))
        if fix.note:
            out.print(Text(fix.note, style="dim"))
        for snippet in fix.snippets:
            if snippet.label:
                out.print(Text(f"{snippet.label}:", style="dim"))
            out.print(Text(_indent(snippet.code), style="cyan"))
    hidden = hidden_fixes_note(card, len(shown))
    if hidden:
        out.print(Text("\n" + hidden, style="dim"))
    if card.links:
        out.print()
    for link in card.links:
        out.print(Text.assemble(link.label, (" → ", "dim"), (link.url, "cyan")))


def _indent(code: str) -> str:
    return "\n".join("    " + line if line else "" for line in code.rstrip("\n").split("\n"))


@cli.command(rich_help_panel=MAINTAINERS)
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
    from app.jaxref.scope import SourceTreeError
    from app.knowledge.mining import mine_one

    try:
        with _output(out) as stream:
            count = mine_one(source, version, commit, stream, history=history)
    except (SourceTreeError, ValueError) as exc:
        _usage_error(str(exc))
    err.print(f"{count} records and annotations")


@cli.command("mine-releases", rich_help_panel=MAINTAINERS)
def mine_releases_command(
    git_dir: Annotated[Path, typer.Argument(help="A git repository of jax-ml/jax with its tags.")],
    out: Annotated[
        Path | None, typer.Option(help="The dataset to write (default: data/mined/).")
    ] = None,
    rules_out: Annotated[
        Path | None, typer.Option(help="The lowering rules to write (default: data/).")
    ] = None,
    wheels: WheelsOption = DEFAULT_WHEELS,
) -> None:
    """Mine every release of data/jax-releases.json into one dataset (ids kept); a release
    the git repository lacks is read from its wheel, without its C++."""
    from app.jaxref.files import FRAME_INDEX_FILE, FUNCTIONS_FILE
    from app.jaxref.scope import SourceTreeError
    from app.knowledge.calls import MINED_CALLS
    from app.knowledge.frame_index import write_frame_index
    from app.knowledge.lowering import MINED_RULES
    from app.knowledge.mining import MINED_SITES, mine_releases
    from app.knowledge.public_names import MINED_API

    sites, rules = out or MINED_SITES, rules_out or MINED_RULES
    functions = rules.with_name(FUNCTIONS_FILE.name)
    sources = _release_sources(git_dir, wheels)
    try:
        with _output(sites) as stream:
            tracks = mine_releases(sources, stream, rules_out=rules, functions_out=functions)
    except SourceTreeError as exc:
        _usage_error(str(exc))
    frames = rules.with_name(FRAME_INDEX_FILE.name)
    public = [sites.with_name(path.name) for path in (MINED_API, MINED_CALLS)]
    write_frame_index([sites, *(path for path in public if path.exists())], frames)
    err.print(
        f"{len(tracks)} sites in {sites}; lowering rules in {rules}; frames in {frames};"
        f" functions in {functions}"
    )


@cli.command("mine-api", rich_help_panel=MAINTAINERS)
def mine_api_command(
    git_dir: Annotated[Path, typer.Argument(help="A git repository of jax-ml/jax with its tags.")],
    out: Annotated[
        Path | None,
        typer.Option(help="The folder to write to (default: data/mined/, and the frame index)."),
    ] = None,
    wheels: WheelsOption = DEFAULT_WHEELS,
) -> None:
    """Mine Pallas's public API in every release of data/jax-releases.json: the names its
    modules export and the parameters its functions take, into records of the errors code
    written for another release meets (reading a missing name, calling with another
    release's arguments). Written to data/mined/, they are also dated in
    data/frame-index.json."""
    from app.jaxref.files import FRAME_INDEX_FILE
    from app.knowledge.calls import KEYWORDS_FILE, MINED_CALLS, call_records, keyword_index
    from app.knowledge.frame_index import write_frame_index
    from app.knowledge.mining import DEFAULT_CURATED, MINED_SITES, curated_records
    from app.knowledge.public_names import (
        MINED_API,
        api_records,
        mine_api,
        unanswered,
        write_api_records,
    )
    from app.knowledge.signatures import mine_signatures

    sources = _release_sources(git_dir, wheels)
    mined = mine_api(sources)
    curated = curated_records(DEFAULT_CURATED)
    signatures = mine_signatures(mined, sources)
    written = {
        MINED_API.name: api_records(mined, curated),
        MINED_CALLS.name: unanswered(call_records(signatures), curated),
    }
    folder = out or MINED_API.parent
    for name, records in written.items():
        with _output(folder / name) as stream:
            count = write_api_records(records, stream)
        err.print(f"{count} records in {folder / name}")
    keywords = (folder if out else KEYWORDS_FILE.parent) / KEYWORDS_FILE.name
    keywords.write_text(json.dumps(keyword_index(signatures), indent=0) + "\n", encoding="utf-8")
    err.print(f"the keywords Pallas's functions take in {keywords}")
    if out is None:
        write_frame_index([MINED_SITES, MINED_API, MINED_CALLS], FRAME_INDEX_FILE)


def _release_sources(git_dir: Path, wheels: Path) -> dict[str, ReleaseSource]:
    """Every release of the table, from the git repository or its wheel; a usage error
    where one can be had from neither."""
    from app.jaxref.releases import release_commits
    from app.knowledge.sources import ReleaseSourceError, release_sources

    try:
        return release_sources(git_dir, release_commits(), wheels)
    except ReleaseSourceError as exc:
        _usage_error(str(exc))


@contextmanager
def _output(path: Path | None) -> Iterator[IO[str]]:
    """Standard output, or ``path`` written whole: a half-written file is never left there,
    nor beside it when the writing fails. Each writer has a partial file of its own, so two
    runs at once each leave a whole file (the last one's); it is hidden, as the importer
    skips hidden files (a server started meanwhile reads the data directory)."""
    if path is None:
        yield sys.stdout
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with partial.open("w", encoding="utf-8") as stream:
            yield stream
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    partial.replace(path)


@db_cli.command("upgrade")
def db_upgrade(
    seed: Annotated[
        bool, typer.Option(help="Also load the seed records into an empty store.")
    ] = False,
) -> None:
    """Apply every pending migration."""
    from app.migrate import upgrade
    from app.records.seeding import prepare_database

    settings = load_settings()
    engine, factory = _database(settings)
    if seed:
        prepare_database(settings, engine, factory)
    else:
        upgrade(settings, engine)
    engine.dispose()
    typer.echo("database is at the newest revision")


def main() -> None:
    cli()
