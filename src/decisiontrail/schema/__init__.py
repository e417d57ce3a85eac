"""GraphQL types (strawberry); filled by the GraphQL API issue."""
