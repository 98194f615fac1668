"""Benchmarks for errata: in-process matching (``benchmarks.match``) and HTTP (``http.sh``)."""
