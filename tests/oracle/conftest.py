"""The oracle tests lower real Pallas kernels with JAX; mark them so they can be selected."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "oracle: runs JAX itself to confirm the engine")
