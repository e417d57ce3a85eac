// graphql-http's server audits (GraphQL over HTTP conformance) against one endpoint.
//
//   node audit.mjs http://127.0.0.1:8000/graphql
//
// Prints one JSON array: every audit's id, name, status ("ok", "notice" for a MAY, "warn" for a
// SHOULD, "error" for a MUST) and, when it failed, the reason and the response that failed it.
// tests/test_graphql_over_http.py runs it and judges the results.
import { serverAudits } from 'graphql-http';

const url = process.argv[2];
if (!url) {
  console.error('usage: node audit.mjs <GraphQL endpoint URL>');
  process.exit(2);
}

async function described(response) {
  if (!response) return null;
  let body;
  try {
    body = (await response.text()).slice(0, 500);
  } catch {
    body = null; // read by the audit itself
  }
  return { status: response.status, contentType: response.headers.get('content-type'), body };
}

const results = [];
// One at a time: a failing audit's response is then the only request the server's log shows.
for (const { fn } of serverAudits({ url, fetchFn: fetch })) {
  const result = await fn();
  results.push({
    id: result.id,
    name: result.name,
    status: result.status,
    ...(result.status === 'ok' ? {} : { reason: result.reason, response: await described(result.response) }),
  });
}
console.log(JSON.stringify(results, null, 2));
