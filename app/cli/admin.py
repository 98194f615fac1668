"""``errata admin``: the maintainers' commands, apart from the user's.

Mining JAX's releases writes the data errata ships (``data/mined/``, the frame index); the
database's migrations are an operator's. None of them is needed to read a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated

import typer

from app.answers.offline import database
from app.cli.printing import command, err, usage_error
from app.knowledge.sources import DEFAULT_WHEELS

if TYPE_CHECKING:
    from app.knowledge.sources import ReleaseSource

admin_cli = typer.Typer(
    help="Maintainers' commands: mining JAX's releases, migrating the database.",
    no_args_is_help=True,
)
db_cli = typer.Typer(help="Database maintenance.", no_args_is_help=True)
admin_cli.add_typer(db_cli, name="db")
WheelsOption = Annotated[
    Path,
    typer.Option(help="Where the wheels of releases the git repository lacks are kept."),
]


@command(admin_cli)
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
    """Mine every error site of one JAX release into records, as JSON Lines."""
    from app.jaxref.scope import SourceTreeError
    from app.knowledge.mining import mine_one

    try:
        with _output(out) as stream:
            count = mine_one(source, version, commit, stream, history=history)
    except (SourceTreeError, ValueError) as exc:
        usage_error(str(exc))
    err.print(f"{count} records and annotations")


@command(admin_cli, "mine-releases")
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
    """Mine every release of data/jax-releases.json into one dataset.

    Record ids are kept from one run to the next. A release the git repository lacks is read
    from its wheel, without its C++. The frame index and the functions of every release are
    written beside the lowering rules.
    """
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
        usage_error(str(exc))
    frames = rules.with_name(FRAME_INDEX_FILE.name)
    public = [sites.with_name(path.name) for path in (MINED_API, MINED_CALLS)]
    write_frame_index([sites, *(path for path in public if path.exists())], frames)
    err.print(
        f"{len(tracks)} sites in {sites}; lowering rules in {rules}; frames in {frames};"
        f" functions in {functions}"
    )


@command(admin_cli, "mine-api")
def mine_api_command(
    git_dir: Annotated[Path, typer.Argument(help="A git repository of jax-ml/jax with its tags.")],
    out: Annotated[
        Path | None,
        typer.Option(help="The folder to write to (default: data/mined/, and the frame index)."),
    ] = None,
    wheels: WheelsOption = DEFAULT_WHEELS,
) -> None:
    """Mine Pallas's public API in every release of data/jax-releases.json.

    The names its modules export and the parameters its functions take become records of the
    errors that code written for another release meets (reading a missing name, calling with
    another release's arguments). Written to data/mined/, they are also dated in
    data/frame-index.json.
    """
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


@command(admin_cli, "adopt-curated")
def adopt_curated_command() -> None:
    """Let the curated records adopt their mined sites, without mining again.

    A record written for a site after the last mining (data/records/) replaces the site's
    mined record in data/mined/jax-sites.jsonl, and the frame index follows it.
    """
    from app.jaxref.files import FRAME_INDEX_FILE
    from app.knowledge.calls import MINED_CALLS
    from app.knowledge.frame_index import write_frame_index
    from app.knowledge.mining import MINED_SITES, adopt_into
    from app.knowledge.public_names import MINED_API

    with _output(MINED_SITES) as stream:  # read whole before the first line is written
        adopted = adopt_into(MINED_SITES, stream)
    write_frame_index([MINED_SITES, MINED_API, MINED_CALLS], FRAME_INDEX_FILE)
    err.print(f"{adopted} sites newly curated in {MINED_SITES}; frames in {FRAME_INDEX_FILE}")


@command(admin_cli, "mine-xla")
def mine_xla_command(
    xla_git: Annotated[Path | None, typer.Option(help="A git repository of openxla/xla.")] = None,
    commit: Annotated[str, typer.Option(help="The commit of it to read.")] = "HEAD",
    xla_cut: Annotated[
        Path | None,
        typer.Option(help="Instead: a cut of a checkout, each file's commit in its PINS.json."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="The dataset to write (default: data/mined/).")
    ] = None,
) -> None:
    """Mine XLA's error catalogue (xla/error/error_codes.h and docs/errors/) into records.

    Each code with a page becomes a record pinned to the commit that last changed its page,
    or, where a curated record holds the code, an annotation of that record.
    """
    from app.jaxref.files import XLA_ERRORS_FILE
    from app.knowledge.mining import DEFAULT_CURATED, curated_records
    from app.knowledge.xla_catalogue import XlaSourceError, cut_source, git_source
    from app.knowledge.xla_errors import catalogue_documents, write_catalogue

    try:
        if xla_git is not None and xla_cut is None:
            source = git_source(xla_git, commit)
        elif xla_cut is not None and xla_git is None:
            source = cut_source(xla_cut)
        else:
            usage_error("give one of --xla-git and --xla-cut")
        documents = list(catalogue_documents(source, curated_records(DEFAULT_CURATED)))
    except XlaSourceError as exc:
        usage_error(str(exc))
    target = out or XLA_ERRORS_FILE
    with _output(target) as stream:
        count = write_catalogue(documents, stream)
    err.print(f"{count} records and annotations in {target}")


def _release_sources(git_dir: Path, wheels: Path) -> dict[str, ReleaseSource]:
    """Every release of the table, from the git repository or its wheel; a usage error
    where one can be had from neither."""
    from app.jaxref.releases import release_commits
    from app.knowledge.sources import ReleaseSourceError, release_sources

    try:
        return release_sources(git_dir, release_commits(), wheels)
    except ReleaseSourceError as exc:
        usage_error(str(exc))


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


@command(db_cli, "upgrade")
def db_upgrade(
    seed: Annotated[
        bool, typer.Option(help="Also load the seed records into an empty store.")
    ] = False,
) -> None:
    """Apply every pending migration (and, with --seed, load an empty store)."""
    from app.config import load_settings
    from app.migrate import upgrade
    from app.records.seeding import prepare_database

    settings = load_settings()
    engine, factory = database(settings)
    if seed:
        prepare_database(settings, engine, factory)
    else:
        upgrade(settings, engine)
    engine.dispose()
    typer.echo("database is at the newest revision")
