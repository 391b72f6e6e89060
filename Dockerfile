# syntax=docker/dockerfile:1

# Production image: `node dist/main.js`, configured by environment only (see .env.example).
# SVC_JWT_SECRET is required; set SVC_DB_URL and SVC_KVSTORE_URL to run several replicas.

ARG NODE_IMAGE=node:24-slim

# ---- build: full dependency tree, compile TypeScript to dist/ ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY web/package.json ./web/
# The install's postinstall checks argon2's native addon (scripts/argon2-check.mjs).
COPY scripts/argon2-check.mjs ./scripts/
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY scripts ./scripts
COPY migrations ./migrations
COPY src ./src
COPY web ./web
RUN npm run build

# ---- deps: production dependencies only ----
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY web/package.json ./web/
COPY scripts/argon2-check.mjs ./scripts/
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund

# ---- runtime ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=8080 \
    SVC_DATA_DIR=/app/data
WORKDIR /app
# Code and dependencies stay root-owned (read-only for the service); only the data directory is writable.
# package.json is needed at runtime: it makes dist/ an ES module tree ("type": "module").
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The young generation at 16 MB a semi-space, as Node 20 sizes it: Node 22+ size it from the machine's memory (up
# to 2 x 64 MB), which a streaming import fills (README, "Memory"). package.json's start scripts say the same.
CMD ["node", "--max-semi-space-size=16", "dist/main.js"]
