"""The app with one calibration route, for the benchmarks that compare an endpoint with the
least any endpoint could cost: ``POST /echo`` validates its body with pydantic and returns
it, access-logged like every API call. Sent the match endpoint's 20 KB paste, it is the
ceiling for an endpoint that does anything with such a body on this stack. (One route for
both bodies: each route tried before the real ones costs every request some 12,000
instructions.)

Served as ``errata serve`` serves the app (same migration, seeding, workers and server
options), for ``benchmarks/http.sh``:

    .venv/bin/python -m benchmarks.calibration --port 8731 --workers 1
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fastapi import FastAPI
from pydantic import BaseModel


class Echo(BaseModel):
    operation: str
    shape: list[int]
    dtype: str


class Paste(BaseModel):
    text: str


def with_echo(app: FastAPI) -> FastAPI:
    """``app`` with the calibration route, tried first, as the busiest routes are."""

    @app.post("/echo")
    async def echo(body: Echo | Paste) -> Echo | Paste:
        return body

    app.router.routes.insert(0, app.router.routes.pop())
    return app


def create_app() -> FastAPI:
    """The app ``errata serve`` runs (configured by the environment), with the route."""
    from app.main import create_app as create_errata

    return with_echo(create_errata())


def main(argv: Sequence[str] | None = None) -> int:
    from app.cli import run_server

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    run_server("benchmarks.calibration:create_app", args.host, args.port, args.workers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
