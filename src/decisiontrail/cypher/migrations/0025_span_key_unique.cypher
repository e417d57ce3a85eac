// A span waiting for its trace's root span, once per trace and span id however often it is sent.
CREATE CONSTRAINT span_key_unique IF NOT EXISTS
FOR (s:Span) REQUIRE s.key IS UNIQUE
