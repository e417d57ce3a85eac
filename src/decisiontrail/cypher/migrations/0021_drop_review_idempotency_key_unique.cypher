// As 0019, for the reviews that hold proposals.
DROP CONSTRAINT review_idempotency_key_unique IF EXISTS
