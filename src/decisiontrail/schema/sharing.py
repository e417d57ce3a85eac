"""One event's answer made once for every subscriber who would be given the same one.

A subscription executes its selection for each event it is given, and sends the answer as a
``next`` message. When a thousand subscribers of one plan hold the same document, variables and
caller, that is a thousand executions and encodings of the same answer. The subscription's
resolver gives them all the same object for an event (``resolvers.queries``); the execution
context (``schema.execution``) keeps what a subscription made of that object, by ``EventKey``,
for as long as the object lives, and the next subscription with the same key is given the same
answer. Its data is ``SharedData``: the view writes its JSON once, and each subscriber's message
around it with the subscriber's own operation id (``web.graphql_view``).

Two subscriptions share an answer only if everything that decides it is the same: the schema,
the parsed operation (the very same object, as the parser's cache hands it out), the variables
as sent, the trail and the caller (a principal's visibility is a function of the principal).
An answer with errors is not kept: each subscriber meets a failure on its own, as it would
without sharing.
"""

from __future__ import annotations

import asyncio
import inspect
import weakref
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from graphql import ExecutionResult, Undefined

from decisiontrail.schema.context import Context


class Same:
    """A key's part that is one object, compared by identity (and kept alive, so its id stays its own)."""

    __slots__ = ("thing",)

    def __init__(self, thing: object) -> None:
        self.thing = thing

    def __hash__(self) -> int:
        return id(self.thing)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Same) and other.thing is self.thing


class SharedData(dict[str, Any]):
    """An event's answer (a result's ``data``) given to every subscriber with the same key: the
    same object for all of them, so its JSON is written once (``json``), by the first to send it."""

    __slots__ = ("json",)

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.json: str | None = None


EventKey = tuple[Hashable, ...]


def subscription_key(schema: object, operation: object, sources: dict[str, Any]) -> EventKey | None:
    """What a subscription's answer to any event depends on, apart from its caller: its schema,
    its operation and its variables as sent; None when a variable's value is nothing plain JSON
    holds (it then shares nothing)."""
    try:
        variables = tuple(sorted((name, _frozen(getattr(source, "value", source))) for name, source in sources.items()))
    except _NotPlain:
        return None
    return (Same(schema), Same(operation), variables)


def event_key(subscription: EventKey, context: object) -> EventKey | None:
    """``subscription``'s key, for one event read as ``context``'s caller on its trail; None for
    a context that is not ours (nothing is known of what it lets its caller see)."""
    if type(context) is not Context:
        return None
    return (*subscription, Same(context.trail), context.principal)


class Pending:
    """An answer a subscription is making on an event loop: the others with its key on that loop wait for it."""

    __slots__ = ("loop", "made")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.made: asyncio.Future[ExecutionResult | None] = loop.create_future()
        """The answer, or None when it had errors or was not finished: each waiter then makes its own."""


Answers = dict[EventKey, "ExecutionResult | Pending"]
"""The answers made to one payload, and being made, by key."""

_ANSWERS: dict[int, Answers] = {}
"""Each payload's answers, by the payload's id, while it lives."""


def answers_to(payload: object) -> Answers | None:
    """The answers made so far to ``payload`` (an event's root value), by key; None for a payload
    that cannot be weakly referenced (its answers would outlive it, and its id be reused)."""
    key = id(payload)
    found = _ANSWERS.get(key)
    if found is None:
        try:
            weakref.finalize(payload, _ANSWERS.pop, key, None)
        except TypeError:
            return None
        found = _ANSWERS.setdefault(key, {})
    return found


def answer(answers: Answers, key: EventKey, execute: Callable[[], Any]) -> Any:
    """``key``'s answer: one made already; or, while another subscription makes it on this event
    loop, that one once made; or what ``execute`` makes (an answer or an awaitable of one), kept
    for the others when it has no errors."""
    found = answers.get(key)
    if isinstance(found, ExecutionResult):
        return found
    loop = _running_loop()
    if found is not None and found.loop is loop:
        return _awaited(found, execute)
    result = execute()
    if not inspect.isawaitable(result):
        made = shareable(result)
        return result if made is None else _kept(answers, key, made)
    pending = None
    if loop is not None and found is None:
        pending = answers[key] = Pending(loop)
    return _made(answers, key, result, pending)


def shareable(result: Any) -> ExecutionResult | None:
    """``result`` as every subscriber with its key may be given it (its data ``SharedData``);
    None for one with errors, or no answer at all."""
    if not isinstance(result, ExecutionResult) or result.errors or not isinstance(result.data, dict):
        return None
    return ExecutionResult(SharedData(result.data), None, result.extensions)


def _kept(answers: Answers, key: EventKey, made: ExecutionResult) -> ExecutionResult:
    found = answers.get(key)
    if isinstance(found, ExecutionResult):  # another loop's, made meanwhile: the same answer
        return found
    answers[key] = made
    return made


async def _made(answers: Answers, key: EventKey, result: Awaitable[Any], pending: Pending | None) -> Any:
    made: ExecutionResult | None = None
    try:
        done = await result
        made = shareable(done)
        if made is None:
            return done
        made = _kept(answers, key, made)
        return made
    finally:
        if pending is not None:
            if answers.get(key) is pending:
                del answers[key]
            pending.made.set_result(made)


async def _awaited(pending: Pending, execute: Callable[[], Any]) -> Any:
    # Shielded: this subscriber leaving must not cancel what the others wait for.
    made = await asyncio.shield(pending.made)
    if made is not None:
        return made
    result = execute()
    return await result if inspect.isawaitable(result) else result


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class _NotPlain(Exception):
    pass


def _frozen(value: Any) -> Hashable:
    """A JSON value as a hashable one; its types kept (``1``, ``1.0`` and ``true`` are three values)."""
    if value is None or type(value) in (str, int, float, bool):
        return (type(value), value)
    if value is Undefined:  # a variable not given
        return ()
    if type(value) is list:
        return (list, tuple(_frozen(v) for v in value))
    if type(value) is dict:
        return (dict, tuple(sorted((k, _frozen(v)) for k, v in value.items())))
    raise _NotPlain
