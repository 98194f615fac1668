"""A digest of errata's answers to the test corpus: a move that changes no behaviour keeps it.

    .venv/bin/python .ci/answer_digest.py [--corpus DIR] [--out FILE]

A fresh SQLite database gets what ``errata serve`` loads (seeds, curated and mined records).
The corpus is every fixture file under ``tests/fixtures`` (JAX's source aside) and every
string constant of 30 characters or more in ``tests/**/test_*.py`` that reads like an error,
deduplicated and sorted by its text, so that moving a test file moves nothing. Each text is
matched with no release, with 0.10.2 and with 0.4.35; each answer is hashed as the API's
JSON, the Markdown answer and the Slack message, then a grid of computes as JSON and
Markdown. The last lines print the number of answers with their SHA-256, and the OpenAPI
document's SHA-256. ``--corpus`` reads the corpus from another checkout (the one before a
change, whose test strings the change may have edited); ``--out`` writes every hashed text,
for a diff.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.answers.cards import compute_answer, match_answers
from app.answers.catalog import Catalog
from app.answers.catalog_cache import CatalogCache
from app.answers.compute import ComputeService
from app.answers.links import Links
from app.answers.match import MatchService
from app.chatops.answers import Reply
from app.chatops.slack import slack_message
from app.config import load_settings
from app.db import make_engine, make_session_factory
from app.main import create_app
from app.records.seeding import prepare_database
from app.records.version_watch import VersionWatch
from app.rendering.markdown import markdown
from app.schemas.compute import ComputeRequest
from app.schemas.match import MatchRequest

REPO = Path(__file__).resolve().parent.parent
RELEASES = (None, "0.10.2", "0.4.35")
OPERATIONS = ("copy_gmem_to_smem", "copy_smem_to_gmem", "pallas_call")
SHAPES = ([7], [3, 100], [8, 128], [100, 100], [24])
DTYPES = ("int4", "float32", "bfloat16", "int8")
LINKS = Links("https://errata.example")


def corpus(root: Path) -> list[str]:
    texts = {
        path.read_text(errors="replace")
        for path in (root / "tests" / "fixtures").rglob("*")
        if path.is_file()
        and path.suffix in (".txt", ".html", ".log", ".md")
        and "jax_source" not in path.parts
    }
    for path in (root / "tests").rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and len(node.value) >= 30
                and any(word in node.value for word in ("Error", "error", "Traceback"))
            ):
                texts.add(node.value)
    return sorted(texts)


def answers(catalog: Catalog, texts: list[str]) -> Iterator[str]:
    for text in texts:
        for release in RELEASES:
            request = MatchRequest(text=text, jaxVersion=release)
            try:
                answer = MatchService(catalog).match(request)
            except Exception as exc:  # a refusal is an answer too
                yield f"{type(exc).__name__}: {exc}"
                continue
            cards = match_answers(answer, catalog.records, LINKS)
            yield answer.model_dump_json()
            yield markdown(cards)
            yield json.dumps(slack_message(Reply(cards, share=True)), sort_keys=True)
    for operation in OPERATIONS:
        for shape in SHAPES:
            for dtype in DTYPES:
                case = ComputeRequest(operation=operation, shape=shape, dtype=dtype)
                try:
                    verdict = ComputeService(catalog).compute(case)
                except Exception as exc:
                    yield f"{type(exc).__name__}: {exc}"
                    continue
                yield verdict.model_dump_json()
                yield markdown([compute_answer(verdict, LINKS)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO, help="checkout to read it from")
    parser.add_argument("--out", type=Path, help="write every hashed text here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        settings = load_settings(database_url=f"sqlite:///{scratch}/errata.sqlite3")
        engine = make_engine(settings.resolved_database_url)
        sessions = make_session_factory(engine)
        prepare_database(settings, engine, sessions)
        catalog = CatalogCache(sessions, VersionWatch()).current()
        digest, count = hashlib.sha256(), 0
        out: IO[str] | None = args.out.open("w") if args.out else None
        for text in answers(catalog, corpus(args.corpus)):
            digest.update(text.encode() + b"\0")
            count += 1
            if out is not None:
                out.write(text + "\n")
        openapi = create_app(settings).openapi()
        engine.dispose()
    print(f"{count} answers {digest.hexdigest()}")
    print(f"openapi {hashlib.sha256(json.dumps(openapi, sort_keys=True).encode()).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
