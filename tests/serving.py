"""The service served by uvicorn in a thread, for tests over real HTTP (the harness's own helper)."""

from reliability.serving import served

__all__ = ["served"]
