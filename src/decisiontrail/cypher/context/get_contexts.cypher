// For each hash, in the order given, the full context stored under it (null when none is).
UNWIND range(0, size($context_hashes) - 1) AS i
OPTIONAL MATCH (c:Context {context_hash: $context_hashes[i]})
RETURN c.content AS content
ORDER BY i
