"""Input objects built from GraphQL's input values by a plan made once per type.

strawberry turns an argument's input value into its input classes by looking at every field's
type again for every value (``strawberry.types.arguments.convert_argument``): for a
``recordDecisions`` batch of 1,000 inputs that was a third of the request's Python time. Each of
the schema's input types gets a ``from_input`` (strawberry's hook for a type that builds its own
value) that does the same conversion from a plan of its fields worked out on first use: which
fields to fill, under which GraphQL name, and which values need converting at all (scalars and
enums arrive from graphql-core as they are kept). A type the plan does not know is converted by
strawberry itself, so what a resolver receives is what strawberry would have built.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import strawberry
from strawberry.relay import GlobalID
from strawberry.schema.compat import is_scalar
from strawberry.types.arguments import InputContext
from strawberry.types.base import (
    StrawberryList,
    StrawberryMaybe,
    StrawberryObjectDefinition,
    StrawberryOptional,
    StrawberryType,
)
from strawberry.types.enum import StrawberryEnumDefinition, has_enum_definition
from strawberry.types.lazy_type import LazyType
from strawberry.types.unset import UNSET

Convert = Callable[[Any, InputContext], Any]
"""Turns one non-null GraphQL input value into what the resolver receives."""


def build_inputs_directly(schema: strawberry.Schema) -> None:
    """Give every input type of ``schema`` (that builds no value of its own yet) a planned ``from_input``."""
    for concrete in schema.schema_converter.type_map.values():
        definition = concrete.definition
        if isinstance(definition, StrawberryObjectDefinition) and definition.is_input and definition.from_input is None:
            definition.from_input = InputBuilder(definition)


@dataclasses.dataclass(frozen=True)
class FieldPlan:
    graphql_name: str
    python_name: str
    convert: Convert | None
    """None: the value is passed on as graphql-core coerced it."""


class InputBuilder:
    """``from_input`` of one input type: its value's fields converted by plan, then the class called with them."""

    def __init__(self, definition: StrawberryObjectDefinition) -> None:
        self.definition = definition
        self.fields: tuple[FieldPlan, ...] | None = None
        # What strawberry passes for a field the client omitted: None unless the class has a default.
        self.unset: dict[str, None] = {
            f.python_name: None
            for f in definition.fields
            if f.default_value is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }

    def __call__(self, cls: type, value: Mapping[str, Any], context: InputContext) -> Any:
        fields = self.fields if self.fields is not None else self._plan(context)
        kwargs: dict[str, Any] = dict(self.unset)
        for field in fields:
            if field.graphql_name in value:
                given = value[field.graphql_name]
                convert = field.convert
                kwargs[field.python_name] = (
                    given if convert is None or given is None or given is UNSET else convert(given, context)
                )
        return cls(**kwargs)

    def _plan(self, context: InputContext) -> tuple[FieldPlan, ...]:
        definition = self.definition
        self.fields = tuple(
            FieldPlan(
                context.config.name_converter.from_field(field),
                field.python_name,
                converter(field.resolve_type(type_definition=definition), context),
            )
            for field in definition.fields
        )
        return self.fields


def converter(type_: StrawberryType | type, context: InputContext) -> Convert | None:
    """How a non-null value of ``type_`` is converted (None: it is not); strawberry's own conversion
    for what this does not know."""
    if isinstance(type_, StrawberryMaybe):  # Some(...) wrapping and its null rules: strawberry's
        return _by_strawberry(type_)
    if isinstance(type_, StrawberryOptional):
        return converter(type_.of_type, context)
    if isinstance(type_, LazyType):
        return converter(type_.resolve_type(), context)
    if isinstance(type_, StrawberryList):
        item = converter(type_.of_type, context)
        if item is None:
            return _copy_list  # a copy, as strawberry makes: graphql-core may share a default list between requests
        convert_item = item
        return lambda values, ctx: [x if x is None or x is UNSET else convert_item(x, ctx) for x in values]
    if isinstance(type_, StrawberryEnumDefinition) or has_enum_definition(type_):
        return None
    if type_ is not GlobalID and is_scalar(type_, context.scalar_registry):
        return None
    definition = getattr(type_, "__strawberry_definition__", None)
    if isinstance(definition, StrawberryObjectDefinition) and isinstance(definition.from_input, InputBuilder):
        build = definition.from_input
        cls = type_
        return lambda value, ctx: build(cls, value, ctx)  # type: ignore[arg-type]
    return _by_strawberry(type_)


def _copy_list(values: Any, context: InputContext) -> list[Any]:
    return list(values)


def _by_strawberry(type_: StrawberryType | type) -> Convert:
    return lambda value, context: context.convert(value, type_)
