# errata API image: slim, non-root, health-checked. Configure with ERRATA_* variables.

# The documentation site, built apart: the image serves it at /guide/ without its builder.
FROM python:3.12-slim AS docs
WORKDIR /src
RUN pip install --no-cache-dir "mkdocs>=1.6,<2" "mkdocs-material>=9.5,<10"
COPY mkdocs.yml ./
COPY docs ./docs
RUN NO_MKDOCS_2_WARNING=1 mkdocs build --strict

FROM python:3.12-slim AS runtime

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    ERRATA_DATA_DIR=/var/lib/errata \
    ERRATA_MIGRATIONS_DIR=/srv/errata/migrations \
    ERRATA_GUIDE_DIR=/srv/errata/site \
    ERRATA_SEED_PATHS=/srv/errata/data/seeds,/srv/errata/data/records,/srv/errata/data/annotations,/srv/errata/data/mined

WORKDIR /srv/errata
COPY pyproject.toml README.md ./
COPY app ./app
COPY errata ./errata
RUN pip install .
COPY migrations ./migrations
COPY data ./data
COPY --from=docs /src/site ./site

RUN useradd --system --uid 10001 --home-dir /var/lib/errata --create-home errata
USER errata

EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"]

CMD ["errata", "serve", "--host", "0.0.0.0", "--port", "8000"]
