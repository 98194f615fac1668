"""Property-based tests over the whole OpenAPI document: no 5xx, and every answer (errors
included) is one the document describes, in status, media type, headers and body."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from app.config import load_settings
from app.main import create_app
from tests.conftest import ADMIN_TOKEN, SEED_DIR

# These read their body raw, as a paste or a document in any of several formats: whatever
# bytes arrive are text, so there is no "schema-violating" body for them to reject.
RAW_BODIES = {("POST", "/api/match"), ("POST", "/api/import")}
# Examples per operation: enough to find the edges, small enough for the suite to stay fast.
EXAMPLES = 25
DATA_DIR = Path(tempfile.mkdtemp(prefix="errata-schemathesis-"))
APP = create_app(
    load_settings(
        data_dir=DATA_DIR,
        seed_paths=[SEED_DIR],
        admin_tokens=[ADMIN_TOKEN],
        rate_limit_per_second=0,  # the generator is one client sending as fast as it can
        slack_signing_secret="slack-signing-secret-for-tests",
        mattermost_tokens=["mattermost-token-for-tests"],
    )
)
# Built from the document alone; the app's database is made on the first request.
schema = schemathesis.openapi.from_dict(APP.openapi())
schema.app = APP


@schemathesis.serializer("application/x-ndjson")
def _ndjson(_context: Any, value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


@pytest.fixture(scope="module", autouse=True)
def _remove_database() -> Iterator[None]:
    yield
    shutil.rmtree(DATA_DIR, ignore_errors=True)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_every_operation_answers_as_documented(case: schemathesis.Case) -> None:
    # A valid-looking cursor or id that this store never issued is rightly a 4xx, so the
    # "schema-valid data must be accepted" check does not apply; every other check does.
    excluded = [positive_data_acceptance]
    if (case.method.upper(), case.operation.path) in RAW_BODIES:
        excluded.append(negative_data_rejection)
    case.call_and_validate(
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, excluded_checks=excluded
    )
