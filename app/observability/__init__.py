"""Operations: Prometheus metrics, structured JSON logs and request ids.

Import the submodules directly: ``multiprocess`` must stay importable before
``prometheus_client`` is, since that library picks its mode once, on first import.
"""
