"""The HTTP side of the service: authentication, the GraphQL view, plain endpoints and middleware, which
``decisiontrail.app`` assembles."""
