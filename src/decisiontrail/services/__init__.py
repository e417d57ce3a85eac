"""Use-cases: the one place each operation is defined; GraphQL, the LangGraph tool and the CLI call them."""
