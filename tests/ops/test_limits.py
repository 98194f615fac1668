"""Rate limits on the expensive calls, CORS, and the settings that drive them."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from app.api.limits import TokenBuckets, is_expensive
from app.config import load_settings
from tests.api.test_records_api import assert_problem
from tests.conftest import ADMIN_TOKEN, Backend, LiveServer, stop_server
from tests.ops.conftest import serve

ORIGIN = "https://ui.example.org"
BURST = 3


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_allows_its_burst_then_refills_at_its_rate() -> None:
    clock = Clock()
    buckets = TokenBuckets(rate=2.0, burst=3, clock=clock)
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == pytest.approx(0.5)  # one token comes every half second
    assert buckets.take("b") == 0.0  # another client has a bucket of its own
    clock.now += 0.5
    assert buckets.take("a") == 0.0
    assert buckets.take("a") > 0
    clock.now += 60  # a long pause refills to the burst, not beyond
    assert [buckets.take("a") for _ in range(4)][-1] > 0


def test_buckets_stay_bounded_however_many_clients_come() -> None:
    clock = Clock()
    buckets = TokenBuckets(rate=1.0, burst=2, max_keys=100, clock=clock)
    for client in range(1_000):
        buckets.take(f"client-{client}")
        buckets.take(f"client-{client}")  # empty buckets cannot be dropped as idle
    assert len(buckets._buckets) <= 100
    assert buckets.take("client-999") > 0  # the most recent clients are remembered


def test_expensive_calls_are_posts_to_the_costly_paths_and_below() -> None:
    for path in ("/api/match", "/api/compute/batch", "/chatops/slack", "/"):
        assert is_expensive("POST", path)
    assert not is_expensive("GET", "/api/match")
    assert is_expensive("GET", "/match")  # a result's link matches its paste again
    assert not is_expensive("GET", "/")
    assert not is_expensive("POST", "/api/matches")  # a prefix of the name is not enough
    assert not is_expensive("PUT", "/api/errors/abc")
    assert not is_expensive("POST", "/api/errors")
    assert is_expensive("POST", "/x/y", paths=("/x",))


def test_limits_and_origins_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ERRATA_RATE_LIMIT_PER_SECOND", "2.5")
    monkeypatch.setenv("ERRATA_RATE_LIMIT_BURST", "7")
    monkeypatch.setenv("ERRATA_CORS_ALLOW_ORIGINS", f"{ORIGIN}, https://b.example.org")
    monkeypatch.setenv("ERRATA_STORE_VERSION_MAX_AGE_S", "0")
    settings = load_settings()
    assert (settings.rate_limit_per_second, settings.rate_limit_burst) == (2.5, 7)
    assert settings.store_version_max_age_s == 0
    assert settings.cors_allow_origins == [ORIGIN, "https://b.example.org"]
    monkeypatch.delenv("ERRATA_CORS_ALLOW_ORIGINS")
    defaults = load_settings()
    assert defaults.cors_allow_origins == [] and defaults.rate_limit_per_second > 0


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server with a tiny budget for expensive calls (a token a minute) and one origin."""
    backend = Backend("sqlite", tmp_path_factory)
    server = serve(
        backend,
        tmp_path_factory.mktemp("limited"),
        ERRATA_RATE_LIMIT_PER_SECOND=str(1 / 60),
        ERRATA_RATE_LIMIT_BURST=str(BURST),
        ERRATA_CORS_ALLOW_ORIGINS=ORIGIN,
    )
    yield server
    stop_server(server)


def test_expensive_calls_past_the_burst_get_429_with_retry_after(limited: LiveServer) -> None:
    with limited.client(headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as http:
        spent = [
            http.post("/api/match", json={"text": "ValueError: x"}),
            http.post("/api/compute/sweep", json={}),  # invalid input still costs a token
            http.post("/api/import", json=[]),
        ]
        assert [r.status_code for r in spent] == [200, 422, 200]
        for path in ("/api/match", "/api/compute", "/api/compute/batch", "/api/import"):
            refused = http.post(path, json={})
            body = assert_problem(refused, 429, "retry")
            assert body["title"] == "Too many requests"
            assert 1 <= int(refused.headers["retry-after"]) <= 60
            assert refused.headers["x-request-id"]
        # Cheap reads are never limited.
        assert all(http.get("/api/errors").status_code == 200 for _ in range(2 * BURST))
        assert http.get("/healthz").status_code == 200


def test_cors_is_off_by_default(client: httpx.Client) -> None:
    preflight = client.options(
        "/api/match",
        headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST"},
    )
    assert "access-control-allow-origin" not in preflight.headers
    plain = client.get("/healthz", headers={"Origin": ORIGIN})
    assert "access-control-allow-origin" not in plain.headers


def test_cors_allows_only_the_configured_origins(limited: LiveServer) -> None:
    with limited.client() as http:
        allowed = http.options(
            "/api/errors",
            headers={"Origin": ORIGIN, "Access-Control-Request-Method": "GET"},
        )
        assert allowed.status_code == 200
        assert allowed.headers["access-control-allow-origin"] == ORIGIN
        simple = http.get("/api/errors", headers={"Origin": ORIGIN})
        assert simple.headers["access-control-allow-origin"] == ORIGIN
        assert "x-request-id" in simple.headers["access-control-expose-headers"].lower()
        other = http.get("/api/errors", headers={"Origin": "https://evil.example.org"})
        assert "access-control-allow-origin" not in other.headers
