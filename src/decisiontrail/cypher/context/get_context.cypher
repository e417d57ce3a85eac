MATCH (c:Context {context_hash: $context_hash})
RETURN c.content AS content
