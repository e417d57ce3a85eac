# syntax=docker/dockerfile:1
# The service's image: the GraphQL API, the explorer page and the plan runtime, serving a Neo4j
# server or cluster named by NEO4J_URI (docs/deployment.md). It holds no embedded Neo4j (no Java):
# a replica is stateless, and every replica of a deployment serves the same database.
#
#   docker build -t decisiontrail .
#   docker run -p 8000:8000 -e NEO4J_URI=neo4j://neo4j.internal:7687 -e NEO4J_USER=neo4j \
#     -e NEO4J_PASSWORD=... -e DECISIONTRAIL_TOKENS_FILE=/etc/decisiontrail/tokens.json \
#     -v /etc/decisiontrail:/etc/decisiontrail:ro decisiontrail

# The explorer page, built from its lockfile as `make explorer` builds it.
FROM node:20-bookworm-slim AS explorer
WORKDIR /build/explorer
COPY explorer/package.json explorer/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY explorer/ ./
RUN mkdir -p ../src/decisiontrail && npm run --silent build

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY pyproject.toml constraints.txt README.md ./
COPY src/ src/
COPY --from=explorer /build/src/decisiontrail/explorer_static/ src/decisiontrail/explorer_static/
# The versions constraints.txt pins, as `make install` installs them; then the files are not needed.
RUN pip install -c constraints.txt . && rm -rf /app/src \
 && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin decisiontrail
USER decisiontrail
EXPOSE 8000
# /healthz: the process answers; /readyz (what a load balancer should ask): Neo4j answers too.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status != 200)"]
# Beyond loopback the service refuses to start without tokens (DECISIONTRAIL_TOKENS_FILE or OIDC).
ENTRYPOINT ["decisiontrail"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000", "--no-access-log"]
