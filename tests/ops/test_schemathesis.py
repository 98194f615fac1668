"""Property-based tests over the whole OpenAPI document, on SQLite and on PostgreSQL: no
5xx, every answer (errors included) is one the document describes, in status, media type,
headers and body, and every request the document allows is accepted.

Requests carry what a real caller's do: the curator's bearer token, each Slack command
signed with the signing secret over the body as sent, each Mattermost command a token the
service accepts; so the commands themselves are answered, not only refused."""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.core import NotSet
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from app.config import load_settings
from app.main import create_app
from tests.chatops.chat import slack_headers
from tests.conftest import (
    ADMIN_TOKEN,
    MATTERMOST_TOKENS,
    POSTGRES_ADMIN_URL,
    SEED_DIR,
    SLACK_SIGNING_SECRET,
    _require_postgres,
)

# These read their body raw, as a paste or a document in any of several formats: whatever
# bytes arrive are text, so there is no "schema-violating" body for them to reject.
RAW_BODIES = {("POST", "/api/match"), ("POST", "/api/import")}
SLACK = ("POST", "/chatops/slack")
MATTERMOST = ("POST", "/chatops/mattermost")
# A slash command's form is read leniently, as the chats send it: the first value of each
# field, as text, other fields ignored. No form is refused for its shape.
LENIENT_FORMS = {SLACK, MATTERMOST}
# A batch answers each case on its own: a case its schema refuses gets its own problem in
# the batch's 200, beside the other cases' answers, rather than refusing the batch.
PER_CASE_PROBLEMS = {("POST", "/api/compute/batch")}
# What the engine reads from a dtype's name, a shape's text or a GPU's name, and which JAX
# releases it models (``jaxVersion``), no JSON Schema can say: those values are checked beyond the
# document (a 422 naming the field), so a schema-valid request may rightly be refused there.
CHECKED_BEYOND_THE_SCHEMA = {
    ("POST", "/api/match"),
    ("POST", "/api/compute"),
    ("POST", "/api/compute/batch"),
    ("POST", "/api/compute/sweep"),
    ("POST", "/api/compute/smem-budget"),
}
# Examples per operation: enough to find the edges, small enough for the suite to stay fast.
EXAMPLES = 25


@schemathesis.serializer("application/x-ndjson")
def _ndjson(_context: Any, value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


@schemathesis.hook
def before_call(_context: Any, case: schemathesis.Case, _kwargs: dict[str, Any]) -> None:
    """Sign each Slack command over the body as it will be sent; give each Mattermost
    command an accepted token."""
    operation = (case.method.upper(), case.operation.path)
    if operation == MATTERMOST and isinstance(case.body, dict):
        case.body = {**case.body, "token": MATTERMOST_TOKENS[0]}
    elif operation == SLACK:
        body = _form_bytes(case.body)
        case.body = body
        case.headers = {**(case.headers or {}), **slack_headers(body)}


def _form_bytes(body: Any) -> bytes:
    """A generated form body, encoded as the client would send it (none: empty)."""
    if isinstance(body, NotSet):
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, dict):
        return urlencode(body, doseq=True).encode()
    return json.dumps(body).encode()


def _schema(database_url: str) -> Any:
    app = create_app(
        load_settings(
            database_url=database_url,
            seed_paths=[SEED_DIR],
            admin_tokens=[ADMIN_TOKEN],
            rate_limit_per_second=0,  # the generator is one client sending as fast as it can
            slack_signing_secret=SLACK_SIGNING_SECRET,
            mattermost_tokens=list(MATTERMOST_TOKENS),
        )
    )
    # Built from the document alone; the app's database is made on the first request.
    schema = schemathesis.openapi.from_dict(app.openapi())
    schema.app = app
    # No text holding NUL is stored (PostgreSQL refuses it), at any depth of a record: a
    # limit JSON Schema cannot state for a record's open-ended fields. tests/ops/test_hostile
    # sends NUL everywhere instead.
    schema.config.generation.update(allow_x00=False)
    return schema


SQLITE_DIR = Path(tempfile.mkdtemp(prefix="errata-schemathesis-"))
POSTGRES_DATABASE = f"errata_schemathesis_{uuid.uuid4().hex[:10]}"
sqlite_schema = _schema(f"sqlite:///{SQLITE_DIR / 'errata.sqlite3'}")
postgres_schema = _schema(
    make_url(POSTGRES_ADMIN_URL).set(database=POSTGRES_DATABASE).render_as_string(False)
)


@pytest.fixture(scope="module")
def sqlite_database() -> Iterator[None]:
    yield
    sqlite_schema.app.state.engine.dispose()
    shutil.rmtree(SQLITE_DIR, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres_database() -> Iterator[None]:
    """The database the PostgreSQL app was built for (skipped locally without a server)."""
    _require_postgres()
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{POSTGRES_DATABASE}"'))
    yield
    postgres_schema.app.state.engine.dispose()
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{POSTGRES_DATABASE}" WITH (FORCE)'))
    admin.dispose()


def _checked_beyond_the_schema(case: schemathesis.Case) -> bool:
    """Whether the request holds values the document cannot describe exactly."""
    operation = (case.method.upper(), case.operation.path)
    if operation in CHECKED_BEYOND_THE_SCHEMA:
        return True
    if operation == ("POST", "/api/match"):
        # Whether a paste reads as text (not binary) is judged from its characters.
        return case.media_type == "text/plain"
    body = json.dumps(case.body, default=str)
    if '"pattern"' in body or '"messagePattern"' in body:
        # A record's patterns (format: regex) must compile in RE2 and not match empty text.
        return True
    if operation == ("POST", "/api/import"):
        # A rendered page or JSON Lines: a grammar of its own, in a string.
        return case.media_type != "application/json"
    if operation == ("PUT", "/api/errors/{record_id}"):
        # A record's id, when the body gives one, must be the path's.
        record = case.body.get("record") if isinstance(case.body, dict) else None
        given = record.get("id") if isinstance(record, dict) else None
        return given is not None and given != (case.path_parameters or {}).get("record_id")
    return False


def _answers_as_documented(case: schemathesis.Case) -> None:
    excluded = []
    if (case.method.upper(), case.operation.path) in RAW_BODIES | LENIENT_FORMS | PER_CASE_PROBLEMS:
        excluded.append(negative_data_rejection)
    if _checked_beyond_the_schema(case):
        excluded.append(positive_data_acceptance)
    case.call_and_validate(
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, excluded_checks=excluded
    )


_EXAMPLES = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)


@pytest.mark.usefixtures("sqlite_database")
@sqlite_schema.parametrize()
@_EXAMPLES
def test_every_operation_answers_as_documented_on_sqlite(case: schemathesis.Case) -> None:
    _answers_as_documented(case)


@pytest.mark.usefixtures("postgres_database")
@postgres_schema.parametrize()
@_EXAMPLES
def test_every_operation_answers_as_documented_on_postgresql(case: schemathesis.Case) -> None:
    _answers_as_documented(case)
