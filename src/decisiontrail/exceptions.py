"""The project's exception hierarchy: every failure a caller can expect, named for what went wrong."""

from __future__ import annotations


class DecisionTrailError(Exception):
    """Base of every error decisiontrail raises on purpose.

    ``code`` is stable and machine-readable (GraphQL puts it in ``extensions``);
    the message is for people.
    """

    code = "DECISIONTRAIL_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[object, ...]:
        # An error crosses from a worker process (check --all, export --all) by pickle, which
        # calls the class with ``args``: a subclass whose constructor takes other arguments
        # (NotFound's kind and id, TooLarge's limit) would not come back, and the pool would
        # report its worker broken instead.
        return (_rebuilt, (type(self), self.message, dict(self.__dict__)))


def _rebuilt(cls: type[DecisionTrailError], message: str, state: dict[str, object]) -> DecisionTrailError:
    """An error as ``__reduce__`` pickled it."""
    error = cls.__new__(cls)
    DecisionTrailError.__init__(error, message)
    error.__dict__.update(state)
    return error


class ValidationFailed(DecisionTrailError):
    """Input does not satisfy the model: ``field`` names what is wrong."""

    code = "VALIDATION_FAILED"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class RuleViolation(DecisionTrailError):
    """Input is well-formed but breaks a rule of the decision graph: ``rule`` names which."""

    code = "RULE_VIOLATION"

    def __init__(self, message: str, *, rule: str) -> None:
        super().__init__(message)
        self.rule = rule


class NotFound(DecisionTrailError):
    """A decision, plan or other record with the given id does not exist."""

    code = "NOT_FOUND"

    def __init__(self, kind: str, identifier: str) -> None:
        super().__init__(f"{kind} {identifier} does not exist")
        self.kind = kind
        self.identifier = identifier


class Forbidden(DecisionTrailError):
    """The caller's role does not allow the action (``access.ALLOWED``); nothing was done.

    Judged by the service, first: a refusal reads the same whichever entry point was used.
    """

    code = "FORBIDDEN"

    def __init__(self, role: str, action: str) -> None:
        super().__init__(f"the {role} role may not {action}")
        self.role = role
        self.action = action


class Conflict(DecisionTrailError):
    """The request raced another change, or targets a record in a state that forbids it."""

    code = "CONFLICT"


class IdempotencyKeyInUse(Conflict):
    """A request with this idempotency key is still being processed: sent again once it has
    finished, the same request is answered with what that one recorded (IETF Idempotency-Key
    draft: 409). Nothing was written."""

    code = "IDEMPOTENCY_KEY_IN_USE"


class IdempotencyKeyMismatch(Conflict):
    """The idempotency key was used before, in the same plan, for a different request (IETF
    Idempotency-Key draft: 422). Nothing was written."""

    code = "IDEMPOTENCY_KEY_MISMATCH"


class TimedOut(DecisionTrailError):
    """A request's query ran past its time limit (or was stopped) and was rolled back; or a run's turn did."""

    code = "TIMEOUT"


class TooLarge(DecisionTrailError):
    """The request needs more memory in one transaction than Neo4j allows; it was rolled back.

    ``limit`` names the limit it met, as Neo4j reported it (``16.0 MiB, db.memory.transaction.max``).
    Retrying would fail the same way: the request must be made smaller, or the limit raised.
    """

    code = "TOO_LARGE"

    def __init__(self, message: str, *, limit: str) -> None:
        super().__init__(message)
        self.limit = limit


class Unavailable(DecisionTrailError):
    """Neo4j cannot be reached, or the embedded server cannot be built or started."""

    code = "UNAVAILABLE"


def validation_failed(error: Exception) -> ValidationFailed:
    """Turn a pydantic ``ValidationError`` into a ``ValidationFailed`` that names the first bad field."""
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return ValidationFailed(str(error))
    details = errors(include_url=False)
    if not details:
        return ValidationFailed(str(error))
    first = details[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    field = ".".join(str(part) for part in first["loc"]) or None
    if field is None and ": " in message:
        # Cross-field rules put the field they are about in front of the message.
        field = message.split(": ", 1)[0]
    text = f"{field}: {message.removeprefix(f'{field}: ')}" if field else message
    if len(details) > 1:
        text += f" (and {len(details) - 1} more problem{'s' if len(details) > 2 else ''})"
    return ValidationFailed(text, field=field)
