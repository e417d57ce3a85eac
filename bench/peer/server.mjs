// The benchmark's peer: decisiontrail's graph served read-only by @neo4j/graphql 7, the library
// a team would otherwise pick, on the same Neo4j as our API. Started by bench/peer.py. Besides the
// generated reads it answers the two walks, `lineage` and `impact`, as @cypher fields running our
// own walk statements (see WALKS below).
//
//   POST /graphql  {query, variables?, operationName?}  -> {data, errors?}
//   GET  /healthz  -> 200 once the driver reached Neo4j and a first query ran, 503 before
//
// Environment: PORT (default 4000), NEO4J_URI (default bolt://127.0.0.1:7687), NEO4J_USER
// (default neo4j), NEO4J_PASSWORD (no auth when unset: the embedded Neo4j has auth disabled),
// NEO4J_DATABASE (default neo4j), PEER_WATCH_STDIN=1 to exit when stdin closes (set by peer.py,
// so the peer never outlives the harness).

import { readFileSync } from "node:fs";
import http from "node:http";

let server;
let driver;
let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  if (server) {
    server.close();
    server.closeAllConnections();
  }
  try {
    await driver?.close();
  } finally {
    process.exit(code);
  }
}
// Before the (slow) library imports, so a SIGTERM while starting also exits cleanly.
process.on("SIGTERM", () => stop(0));
process.on("SIGINT", () => stop(0));
if (process.env.PEER_WATCH_STDIN === "1") {
  process.stdin.on("end", () => stop(0));
  process.stdin.on("error", () => stop(0));
  process.stdin.resume();
}

const { Neo4jGraphQL } = await import("@neo4j/graphql");
const { graphql } = await import("graphql");
const { default: neo4j } = await import("neo4j-driver");

const port = Number.parseInt(process.env.PORT ?? "4000", 10);
const uri = process.env.NEO4J_URI || "bolt://127.0.0.1:7687";
const database = process.env.NEO4J_DATABASE || "neo4j";
const password = process.env.NEO4J_PASSWORD;
const user = process.env.NEO4J_USER || "neo4j";
const CONNECT_TIMEOUT_MS = 30_000;
const MAX_BODY_BYTES = 1 << 20;

// The walks: lineage and impact as @cypher Query fields running the statements our service runs,
// read from its own files at start, so the walk cannot drift from ours. Only what @cypher needs
// differs, and the walk itself (its OPTIONAL MATCHes, pattern, WHERE and DISTINCT collect) is
// taken verbatim up to its `WITH origin, collect(DISTINCT reached) AS reached`:
// - the parameters are the field's arguments, so `$decision_id` is `$decisionId` (and lineage's
//   `$as_of` is `$asOf`; the library writes an unset argument into the text as NULL, not a null
//   parameter, which answers the same);
// - the RETURN: a @cypher field whose type is a list of nodes takes one node per row in its
//   `columnName` and projects each itself, so the walk's nodes come back one a row (`UNWIND ...
//   AS node`) instead of our id lists and origin fields. Decisions and plans in one list, the union
//   `Reached`: one field, one statement, one walk, like ours (two fields, `decisions` and `plans`,
//   would each run the walk). Only decisions and plans, as ours keeps from `reached`;
// - impact's list holds the decision itself too (when it exists), as our GraphQL `impact` answers
//   it among `decisions`; ours reads it from the statement's separate `origin` columns.
// An unknown decision answers an empty list (ours: an error, from the same `found`/null columns).
const CYPHER_DIR = new URL("../../src/decisiontrail/cypher/", import.meta.url);
const WALK_END = "WITH origin, collect(DISTINCT reached) AS reached";

function walkOf(name, renames) {
  const text = readFileSync(new URL(`${name}.cypher`, CYPHER_DIR), "utf8");
  const lines = text.split("\n").filter((line) => !line.trimStart().startsWith("//"));
  const end = lines.findIndex((line) => line.trim() === WALK_END);
  if (end < 0) throw new Error(`${name}.cypher no longer has the line \`${WALK_END}\`: adapt bench/peer/server.mjs`);
  let walk = lines.slice(0, end + 1).join("\n");
  for (const [from, to] of Object.entries(renames)) {
    if (!new RegExp(`\\$${from}\\b`).test(walk)) throw new Error(`${name}.cypher no longer uses $${from}`);
    walk = walk.replace(new RegExp(`\\$${from}\\b`, "g"), () => `$${to}`);
  }
  if (/\$(?!decisionId\b|asOf\b)\w/.test(walk)) throw new Error(`${name}.cypher takes a parameter the peer lacks`);
  if (walk.includes('"""') || walk.includes("\\")) throw new Error(`${name}.cypher does not fit a block string`);
  return walk;
}

const WALKS = {
  lineage: `${walkOf("decision/lineage", { decision_id: "decisionId", as_of: "asOf" })}
UNWIND [x IN reached WHERE x:Decision OR x:Plan] AS node
RETURN node`,
  impact: `${walkOf("correction/downstream", { decision_id: "decisionId" })}
UNWIND [x IN [origin] + reached WHERE x:Decision OR x:Plan] AS node
RETURN node`,
};

// The graph model of docs/architecture.md, read-only: camelCase fields over the stored snake_case
// properties, `id` for decision_id / plan_id, as our API names them. Relationships point from the
// dependent end: (decision)-[:IN_PLAN]->(plan), (child)-[:PARENT]->(parent),
// (dependent)-[:DEPENDS_ON]->(dependency).
// Gotcha (7.6.3): a nested `sort` on an @alias-ed field only works when that field is also
// selected, since the ORDER BY runs on the projected map (bench/peer.py's query selects it).
const typeDefs = /* GraphQL */ `
  extend schema @query(read: true, aggregate: false) @mutation(operations: []) @subscription(events: [])

  type Plan @node(labels: ["Plan"]) {
    id: ID! @alias(property: "plan_id")
    description: String
    phase: String
    createdAt: DateTime @alias(property: "created_at")
    invalidatedAt: DateTime @alias(property: "invalidated_at")
    decisions: [Decision!]!
      @relationship(type: "IN_PLAN", direction: IN, nestedOperations: [], aggregate: false)
  }

  type Decision @node(labels: ["Decision"]) {
    id: ID! @alias(property: "decision_id")
    planId: ID! @alias(property: "plan_id")
    sequenceNumber: Int! @alias(property: "sequence_number")
    decisionType: String! @alias(property: "decision_type")
    phase: String
    question: String
    chosenOption: String @alias(property: "chosen_option")
    confidenceScore: Float @alias(property: "confidence_score")
    rationale: String
    isCorrection: Boolean @alias(property: "is_correction")
    createdAt: DateTime @alias(property: "created_at")
    supersededAt: DateTime @alias(property: "superseded_at")
    plan: Plan @relationship(type: "IN_PLAN", direction: OUT, nestedOperations: [], aggregate: false)
    parent: Decision @relationship(type: "PARENT", direction: OUT, nestedOperations: [], aggregate: false)
    children: [Decision!]!
      @relationship(type: "PARENT", direction: IN, nestedOperations: [], aggregate: false)
    dependsOn: [Decision!]!
      @relationship(type: "DEPENDS_ON", direction: OUT, nestedOperations: [], aggregate: false)
    dependents: [Decision!]!
      @relationship(type: "DEPENDS_ON", direction: IN, nestedOperations: [], aggregate: false)
  }

  # What a walk reaches. The library also generates a \`reacheds\` read for it, left there: turning it
  # off takes @query(read: false) on the union, which it refuses beside the schema's own @query.
  "What a walk reaches: a decision or a plan."
  union Reached = Decision | Plan

  type Query {
    "Where a decision comes from (decision/lineage.cypher): its ancestors, the plans above, what it depends on."
    lineage(decisionId: ID!, asOf: DateTime): [Reached!]!
      @cypher(statement: """
${WALKS.lineage}
""", columnName: "node")
    "What correcting a decision reaches (correction/downstream.cypher), the decision itself included."
    impact(decisionId: ID!): [Reached!]!
      @cypher(statement: """
${WALKS.impact}
""", columnName: "node")
  }
`;

driver = neo4j.driver(uri, password !== undefined ? neo4j.auth.basic(user, password) : undefined, {
  connectionTimeout: 10_000,
  connectionAcquisitionTimeout: 30_000,
  disableLosslessIntegers: true,
});
// Neither checkNeo4jCompat nor assertIndexesAndConstraints is called: v7 only runs them on request,
// and the peer must not touch the schema our migrations own.
const schema = await new Neo4jGraphQL({ typeDefs, driver }).getSchema();

let healthy = false;

function send(res, status, body) {
  const payload = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
  res.end(payload);
}

async function readJson(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error("request body too large");
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

async function execute(query, variables, operationName) {
  // A fresh context per request: the library stores its executor in it.
  const contextValue = { executionContext: driver, sessionConfig: { database } };
  return graphql({ schema, source: query, variableValues: variables ?? undefined, operationName, contextValue });
}

async function handle(req, res) {
  const path = new URL(req.url ?? "/", "http://peer").pathname;
  if (path === "/healthz" && (req.method === "GET" || req.method === "HEAD")) {
    send(res, healthy ? 200 : 503, { status: healthy ? "ok" : "starting" });
    return;
  }
  if (path !== "/graphql") {
    send(res, 404, { errors: [{ message: "not found" }] });
    return;
  }
  if (req.method !== "POST") {
    res.setHeader("allow", "POST");
    send(res, 405, { errors: [{ message: "POST a JSON body {query, variables}" }] });
    return;
  }
  let body;
  try {
    body = await readJson(req);
  } catch (e) {
    send(res, 400, { errors: [{ message: `bad request body: ${e.message}` }] });
    return;
  }
  if (typeof body?.query !== "string") {
    send(res, 400, { errors: [{ message: "the body must be a JSON object with a string `query`" }] });
    return;
  }
  const result = await execute(body.query, body.variables, body.operationName);
  send(res, 200, { data: result.data ?? null, ...(result.errors ? { errors: result.errors } : {}) });
}

server = http.createServer((req, res) => {
  handle(req, res).catch((e) => {
    console.error(e);
    if (!res.headersSent) send(res, 500, { errors: [{ message: String(e?.message ?? e) }] });
    else res.destroy();
  });
});
server.keepAliveTimeout = 60_000;

async function connect() {
  const deadline = Date.now() + CONNECT_TIMEOUT_MS;
  for (;;) {
    try {
      await driver.verifyConnectivity({ database });
      break;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`cannot reach Neo4j at ${uri} (database ${database}): ${e.message}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  // One read through the library, so the first measured request does not pay for its one-off
  // `CALL dbms.components()` version probe.
  const warm = await execute("query { plans(limit: 1) { id } }");
  if (warm.errors?.length) throw new Error(`warm-up query failed: ${warm.errors.map((e) => e.message).join("; ")}`);
  healthy = true;
}

server.listen(port, "127.0.0.1", () => {
  console.log(`peer ready on http://127.0.0.1:${server.address().port}`);
  connect().catch((e) => {
    console.error(`peer: ${e.message}`);
    stop(1);
  });
});
