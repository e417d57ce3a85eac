"""List variables coerced by a plan made once per type, the way graphql-core coerces them.

graphql-core coerces a variable's value by looking at the type again at every value
(``coerce_input_value``: is it non-null? a list? an input object? which fields does it have?),
after walking the whole value once more to make sure it is not nested too deeply for that
recursion. For ``recordDecisions``' batch of 1,000 inputs the two were about a fifth of the
served process's work (py-spy). A list variable whose type holds no input object that contains itself is
coerced here instead, by a function made once per type: the same checks in the same order,
with the same leaf coercion, defaults and ``out_type`` (strawberry builds its input classes
there), so the value is the one graphql-core would make. Its depth cannot exceed the type's,
so the walk for depth is not needed.

Only values this plan finds valid are coerced by it. Anything it would have to refuse (a null
where the type allows none, an unknown or missing field, a leaf its scalar rejects, a value
that is not a list or an object where one is expected, a list given as one item) is left to
graphql-core, which coerces it or reports the error it always reports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from graphql import (
    DocumentNode,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLSchema,
    OperationDefinitionNode,
    Undefined,
    is_input_type,
    is_required_input_field,
    print_ast,
)
from graphql.utilities import type_from_ast
from graphql.utilities.coerce_input_value import coerce_default_value

Coerce = Callable[[Any], Any]
"""Coerces one value of its type, or raises ``Refused``."""


PLANS_KEPT = 256
"""Plans kept per schema; one for a type written after that is made for its request alone."""


class Refused(Exception):
    """graphql-core's coercion must judge this value (it may refuse it, with its own error)."""


class Unplanned(Exception):
    """The type holds an input object that contains itself, or a one-of input object: no plan for it."""


def precoerce(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None,
    raw: Mapping[str, Any] | None,
    plans: dict[str, Coerce | None],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The list variables of the operation coerced here, and the raw values for graphql-core,
    in which each of them is an empty list (a valid value of any list type, coerced at once).

    ``plans`` holds each list type's coercion by the type as written (``[RecordDecisionInput!]!``),
    made on first use (None for a type without one).
    With nothing coerced here, the raw values are returned as they came.
    """
    if not raw:
        return {}, dict(raw or {})
    operation = _operation(document, operation_name)
    coerced: dict[str, Any] = {}
    if operation is not None:
        for definition in operation.variable_definitions or ():
            name = definition.variable.name.value
            value = raw.get(name)
            if not isinstance(value, list) or not value:
                continue
            # By the type as written: type_from_ast makes new list and non-null wrappers each time.
            written = print_ast(definition.type)
            if written in plans:
                plan = plans[written]
            else:
                type_ = type_from_ast(schema, definition.type)
                plan = _plan_of_list(type_) if type_ is not None and is_input_type(type_) else None
                if len(plans) < PLANS_KEPT:  # a client can write list types without end
                    plans[written] = plan
            if plan is None:
                continue
            try:
                coerced[name] = plan(value)
            except Refused:
                continue
    if not coerced:
        return {}, dict(raw)
    return coerced, {**raw, **dict.fromkeys(coerced, [])}


def _operation(document: DocumentNode, operation_name: str | None) -> OperationDefinitionNode | None:
    """The operation graphql-core will execute, when that is plain (else None: it judges)."""
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if operation_name is None:
        return operations[0] if len(operations) == 1 else None
    named = [o for o in operations if o.name is not None and o.name.value == operation_name]
    return named[0] if len(named) == 1 else None


def _plan_of_list(type_: GraphQLInputType) -> Coerce | None:
    nullable = type_.of_type if isinstance(type_, GraphQLNonNull) else type_
    if not isinstance(nullable, GraphQLList):
        return None
    try:
        return plan_of(type_)
    except Unplanned:
        return None


def plan_of(type_: GraphQLInputType, within: frozenset[GraphQLInputObjectType] = frozenset()) -> Coerce:
    """How a value of ``type_`` is coerced, as ``graphql.utilities.coerce_input_value`` does for
    a value it accepts; ``Refused`` for any other value."""
    if isinstance(type_, GraphQLNonNull):
        inner = plan_of(type_.of_type, within)

        def non_null(value: Any) -> Any:
            if value is None or value is Undefined:
                raise Refused
            return inner(value)

        return non_null
    if isinstance(type_, GraphQLList):
        item = plan_of(type_.of_type, within)

        def list_of(value: Any) -> Any:
            if value is None:
                return None
            if not isinstance(value, list):
                raise Refused  # one value given for a list, or another iterable: graphql-core's to judge
            return [item(v) for v in value]

        return list_of
    if isinstance(type_, GraphQLInputObjectType):
        return _object_plan(type_, within)
    coerce_leaf = type_.coerce_input_value

    def leaf(value: Any) -> Any:
        if value is None:
            return None
        try:
            coerced = coerce_leaf(value)
        except Exception as refused:  # graphql-core turns any exception here into its error
            raise Refused from refused
        if coerced is Undefined:
            raise Refused
        return coerced

    return leaf


def _object_plan(type_: GraphQLInputObjectType, within: frozenset[GraphQLInputObjectType]) -> Coerce:
    if type_ in within or type_.is_one_of:
        raise Unplanned(type_.name)
    inside = within | {type_}
    names = frozenset(type_.fields)
    fields = [
        (
            name,
            field.out_name or name,
            plan_of(field.type, inside),
            is_required_input_field(field),
            field,
        )
        for name, field in type_.fields.items()
    ]
    out_type = type_.out_type

    def input_object(value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, dict) or not names.issuperset(value):
            raise Refused
        coerced: dict[str, Any] = {}
        for name, out_name, coerce, required, field in fields:
            if name in value:
                coerced[out_name] = coerce(value[name])
            elif required:
                raise Refused
            else:
                default = coerce_default_value(field)
                if default is not Undefined:
                    coerced[out_name] = default
        return out_type(coerced)

    return input_object
