"""Thin GraphQL resolvers that call the services; filled by the GraphQL API issue."""
