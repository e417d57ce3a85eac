"""The GraphQL types: what the API shows, and the per-request context and errors its fields and resolvers share."""
