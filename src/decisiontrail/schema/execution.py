"""Fields that only read their object, and whole selections of them, completed without graphql-core's per-field steps.

graphql-core executes every field of every object in an answer the same way: a path, a
``GraphQLResolveInfo``, the field's resolver (strawberry's wrapper, with its own ``Info``,
argument conversion and extension hooks), then completion, with a check for awaitables at every
step. A plan's tree of 1,000 decisions is over 6,000 such steps, and they were most of the time
its answer took once the statement had run.

Most fields of the objects a large answer holds only read their object: an attribute
(``TreeEntry.depth``), or a method that takes nothing but ``self`` (``Decision.id``), or ``self``
and ``info`` and answers from what the object already holds (``Decision.children`` of an
outline). This execution context answers such a field directly, and when the field's value is an
object (or a list of them) whose selected fields are all of that kind, completes the whole
selection below it in one pass: the subfields graphql-core collects (aliases, fragments,
``@skip``/``@include`` judged as ever), each read and completed as graphql-core completes it.

Anything else goes graphql-core's usual way, which also reports errors as it always has: a field
with arguments or permissions, an awaitable, a null where the schema allows none, a read that
raises. A selection that could not be completed directly once is executed the usual way for the
rest of the request (its reads are repeatable, so reading again costs time, never correctness).
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast, overload

from graphql import (
    DocumentNode,
    GraphQLEnumType,
    GraphQLField,
    GraphQLID,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLSchema,
    GraphQLString,
    is_leaf_type,
)
from graphql.execution.collect_fields import FieldDetailsList
from graphql.execution.executor import to_nodes
from graphql.pyutils import Path, RefMap
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.types.field import StrawberryField

from decisiontrail.schema import sharing
from decisiontrail.schema.variables import Coerce, precoerce


@dataclass(frozen=True)
class DirectRead:
    """How one field is read straight from its object."""

    field: StrawberryField
    definition: GraphQLField
    read: Callable[..., Any]
    wants_info: bool
    """The read is a method of ``self`` and ``info``."""


class NotDirect(Exception):
    """This selection needs graphql-core's usual steps."""


class DirectFieldsExecutionContext(StrawberryGraphQLCoreExecutionContext):
    """strawberry's execution context, with fields that only read their object completed directly
    (and list variables coerced by a plan of their type: ``schema.variables``)."""

    @classmethod
    def build(
        cls,
        schema: GraphQLSchema,
        document: DocumentNode,
        root_value: Any = None,
        context_value: Any = None,
        raw_variable_values: dict[str, Any] | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        """graphql-core's ``build``, given each list variable ``precoerce`` coerced as an empty list
        (which it coerces at once), and then its value."""
        operation_name = args[0] if args else kwargs.get("operation_name")
        plans = _PLANS.setdefault(schema, {})
        coerced, raw = precoerce(schema, document, operation_name, raw_variable_values, plans)
        executor = super().build(schema, document, root_value, context_value, raw, *args, **kwargs)
        if coerced and not isinstance(executor, list):
            assert raw_variable_values is not None  # precoerce coerced some of them
            values = executor.variable_values
            values.coerced.update(coerced)
            for name in coerced:
                values.sources[name] = values.sources[name]._replace(value=raw_variable_values[name])
        return executor

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.not_direct: dict[int, FieldDetailsList] = {}
        """Selections executed the usual way (by identity; each kept alive so its id stays its own)."""
        self.selections: dict[tuple[str, int], tuple[FieldDetailsList, list[Selected]]] = {}
        """What each selection asks of a type, worked out once (each kept alive, as ``not_direct``'s)."""
        self.enum_names: dict[GraphQLEnumType, dict[Any, Any]] = {}
        """Each enum's members as they serialise, learnt as they come."""
        # An extension that sees every field's resolution (a ``resolve`` hook) is a middleware here.
        self.watched = self.middleware_manager is not None and bool(self.middleware_manager.middlewares)
        self.keyed = False
        self.subscription: sharing.EventKey | None = None
        """What this subscription's answers depend on but its caller (``sharing.subscription_key``),
        worked out at its first event (``keyed``); None for one that shares nothing."""
        self.sharing: tuple[sharing.Answers, sharing.EventKey] | None = None
        """Where this event's answer is kept for the subscriptions given the same payload, and by what key."""

    def build_per_event_executor(self, payload: Any) -> DirectFieldsExecutionContext:
        """graphql-core's copy of a subscription's executor for one event, with nothing remembered
        about selections: each event collects its fields anew (new lists, so the ids these are
        remembered by never match another event's), and a shallow copy shared them, so each
        subscriber kept every event's for as long as it stayed connected. A context that can make
        one for an event (``for_event``) does: what one event read is not another's answer.

        The event's answer is looked for among those other subscriptions made of the same payload
        (``schema.sharing``): one made with the same key is this subscription's answer too."""
        executor = cast(DirectFieldsExecutionContext, super().build_per_event_executor(payload))
        for_event = getattr(executor.context_value, "for_event", None)
        if callable(for_event):
            executor.context_value = for_event()
        executor._relevant_sub_fields = {}
        executor._stream_usages = RefMap()
        executor.not_direct = {}
        executor.selections = {}
        if not self.keyed:
            self.subscription = sharing.subscription_key(self.schema, self.operation, self.variable_values.sources)
            self.keyed = True
        executor.sharing = None
        if self.subscription is not None and not self.watched:
            key = sharing.event_key(self.subscription, executor.context_value)
            answers = sharing.answers_to(payload) if key is not None else None
            if key is not None and answers is not None:
                executor.sharing = (answers, key)
        return executor

    def execute_operation(self, serially: bool | None = None) -> Any:
        """graphql-core's, but an event's answer is made once for every subscription with the
        same key given the same payload (``sharing.answer``)."""
        if self.sharing is None:
            return super().execute_operation(serially)
        answers, key = self.sharing
        return sharing.answer(answers, key, functools.partial(super().execute_operation, serially))

    def complete_value(
        self,
        return_type: GraphQLOutputType,
        field_details_list: FieldDetailsList,
        info: Any,
        path: Path,
        result: Any,
        position_context: Any,
    ) -> Any:
        """A resolver's object, or list, completed directly when everything it selects only reads it."""
        inner = return_type.of_type if isinstance(return_type, GraphQLNonNull) else return_type
        if (
            isinstance(inner, GraphQLList | GraphQLObjectType)
            and not self.watched
            and result is not None
            and id(field_details_list) not in self.not_direct
            and not isinstance(result, Exception)
            and not self.is_awaitable(result)
        ):
            try:
                return self.complete_directly(return_type, field_details_list, result, path)
            except Exception:  # NotDirect, or an error: completed, and reported, the usual way below
                self.not_direct[id(field_details_list)] = field_details_list
        return super().complete_value(return_type, field_details_list, info, path, result, position_context)

    def execute_field(
        self,
        parent_type: GraphQLObjectType,
        source: Any,
        field_details_list: FieldDetailsList,
        path: Path,
        position_context: Any,
    ) -> Any:
        direct = direct_read(self.schema, parent_type.name, field_details_list[0].node.name.value)
        if direct is not None and not self.watched and id(field_details_list) not in self.not_direct:
            try:
                value = self.read(direct, parent_type, source, field_details_list, path)
                return self.complete_directly(direct.definition.type, field_details_list, value, path)
            except Exception:  # NotDirect, or an error: answered, and reported, the usual way below
                self.not_direct[id(field_details_list)] = field_details_list
        return super().execute_field(parent_type, source, field_details_list, path, position_context)

    def read(
        self,
        direct: DirectRead,
        parent_type: GraphQLObjectType,
        source: Any,
        field_details_list: FieldDetailsList,
        path: Path | LazyPath,
    ) -> Any:
        if not direct.wants_info:
            return direct.read(source)
        # Built only if the read looks at it: an outline's children are read from memory.
        info = LazyInfo(lambda: self.context_info(self.resolve_info(direct, parent_type, field_details_list, path), direct.field))
        value = direct.read(source, info)
        if type(value) is not list and inspect.isawaitable(value):
            if inspect.iscoroutine(value):
                value.close()  # never started: nothing ran
            raise NotDirect
        return value

    def resolve_info(
        self, direct: DirectRead, parent_type: GraphQLObjectType, field_details_list: FieldDetailsList, path: Path | LazyPath
    ) -> Any:
        return self.build_resolve_info(direct.definition, to_nodes(field_details_list), parent_type, as_path(path))

    def context_info(self, raw: Any, field: StrawberryField) -> Any:
        strawberry_schema = self.schema._strawberry_schema  # type: ignore[attr-defined]
        return strawberry_schema.config.info_class(_raw_info=raw, _field=field)

    def complete_directly(
        self, return_type: GraphQLOutputType, field_details_list: FieldDetailsList, value: Any, path: Path | LazyPath
    ) -> Any:
        """``value`` completed as graphql-core completes it, or NotDirect. ``path`` is made a Path
        only if a read looks at its resolve info (most never do)."""
        if isinstance(return_type, GraphQLNonNull):
            if value is None:
                raise NotDirect  # graphql-core's error, at its place
            return_type = return_type.of_type
        elif value is None:
            return None
        if isinstance(return_type, GraphQLList):
            if isinstance(value, Identities):
                return self.complete_identities(return_type, field_details_list, value, path)
            if not isinstance(value, list | tuple):
                raise NotDirect
            item_type = return_type.of_type
            non_null = isinstance(item_type, GraphQLNonNull)
            object_type = item_type.of_type if non_null else item_type
            if isinstance(object_type, GraphQLObjectType) and object_type.is_type_of is None:
                # A list of objects (a tree's entries, a decision's children): one selection for all.
                selection = self.selection(object_type, field_details_list)
                completed: list[dict[str, Any] | None] = []
                for i, item in enumerate(value):
                    if item is None:
                        if non_null:
                            raise NotDirect
                        completed.append(None)
                    else:
                        completed.append(self.complete_object(object_type, selection, item, (path, i, None)))
                return completed
            return [self.complete_directly(item_type, field_details_list, item, (path, i, None)) for i, item in enumerate(value)]
        if isinstance(return_type, GraphQLObjectType):
            if return_type.is_type_of is not None:
                raise NotDirect
            return self.complete_object(return_type, self.selection(return_type, field_details_list), value, path)
        if is_leaf_type(return_type):
            return self.complete_leaf(return_type, value)
        raise NotDirect

    def complete_identities(
        self, return_type: GraphQLList[Any], field_details_list: FieldDetailsList, value: Identities, path: Path | LazyPath
    ) -> Any:
        """A list of objects known by their ids: from the ids alone when only ``id`` (and
        ``__typename``) is selected, one small dict per id; else its objects, built, as a list."""
        item_type = return_type.of_type
        object_type = item_type.of_type if isinstance(item_type, GraphQLNonNull) else item_type
        if isinstance(object_type, GraphQLObjectType) and object_type.is_type_of is None:
            selection = self.selection(object_type, field_details_list)
            if all(
                direct is None or (name == "id" and leaf in _TEXT and not direct.wants_info)
                for _, name, direct, _, leaf in selection
            ):
                keys = [(key, name if direct is None else None) for key, name, direct, _, _ in selection]
                if keys == [("id", None)]:  # the usual selection, { id }
                    return [{"id": i} for i in value.ids]
                return [{key: i if typename is None else typename for key, typename in keys} for i in value.ids]
        return self.complete_directly(return_type, field_details_list, list(value), path)

    def complete_object(
        self, return_type: GraphQLObjectType, selection: list[Selected], value: Any, path: Path | LazyPath
    ) -> dict[str, Any]:
        completed: dict[str, Any] = {}
        for key, name, direct, sub_fields, leaf in selection:
            if direct is None:  # __typename
                completed[key] = name
            elif leaf is not None and not direct.wants_info:  # the common case, without a path
                sub_value = direct.read(value)
                if sub_value is not None:
                    completed[key] = self.complete_leaf(leaf, sub_value)
                elif isinstance(direct.definition.type, GraphQLNonNull):
                    raise NotDirect  # graphql-core's error, at its place
                else:
                    completed[key] = None
            else:
                sub_path = (path, key, return_type.name)
                sub_value = self.read(direct, return_type, value, sub_fields, sub_path)
                completed[key] = self.complete_directly(direct.definition.type, sub_fields, sub_value, sub_path)
        return completed

    def complete_leaf(self, leaf: Any, value: Any) -> Any:
        """``complete_leaf_value``, with the two most frequent cases remembered: text is itself, and
        an enum member serialises the same way every time (strawberry's enum looks it up by a scan)."""
        if type(value) is str and leaf in _TEXT:
            return value
        if isinstance(leaf, GraphQLEnumType):
            names = self.enum_names.setdefault(leaf, {})
            try:
                return names[value]
            except KeyError:
                names[value] = serialized = self.complete_leaf_value(leaf, value)
                return serialized
            except TypeError:  # unhashable: not a member
                pass
        return self.complete_leaf_value(leaf, value)

    def selection(self, return_type: GraphQLObjectType, field_details_list: FieldDetailsList) -> list[Selected]:
        """What ``field_details_list`` selects of ``return_type``, each field with its direct read, or NotDirect."""
        key = (return_type.name, id(field_details_list))
        cached = self.selections.get(key)
        if cached is not None:
            return cached[1]
        fields, deferred, _ = self.collect_subfields(return_type, field_details_list)
        if deferred:
            raise NotDirect
        found: list[Selected] = []
        for response_key, sub_fields in fields.items():
            name = sub_fields[0].node.name.value
            if name == "__typename":
                found.append((response_key, return_type.name, None, sub_fields, None))
                continue
            direct = direct_read(self.schema, return_type.name, name)
            if direct is None or id(sub_fields) in self.not_direct:
                raise NotDirect
            field_type = direct.definition.type
            inner = field_type.of_type if isinstance(field_type, GraphQLNonNull) else field_type
            found.append((response_key, name, direct, sub_fields, inner if is_leaf_type(inner) else None))
        self.selections[key] = (field_details_list, found)
        return found


class Identities(Sequence[Any]):
    """Objects of one type known only by their ids (what a walk answers): each is built when
    something reads it, so a selection of nothing but ``id`` (and ``__typename``) is completed from
    the ids (``complete_identities``) without building any. ``make(i)`` must be an object whose
    ``id`` field reads ``i``."""

    __slots__ = ("ids", "make")

    def __init__(self, ids: Sequence[str], make: Callable[[str], Any]) -> None:
        self.ids = ids
        self.make = make

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self.make(i) for i in self.ids[index]]
        return self.make(self.ids[index])

    def __iter__(self) -> Iterator[Any]:
        return map(self.make, self.ids)


LazyPath = tuple[Any, str | int, str | None]
"""A response path not made a Path yet: the path before it (a Path or another LazyPath), the key, the type's name."""


def as_path(path: Path | LazyPath) -> Path:
    """``path`` as graphql-core's Path."""
    if isinstance(path, Path):
        return path
    prev, key, typename = path
    return Path(as_path(cast("Path | LazyPath", prev)), key, typename)


class LazyInfo:
    """strawberry's Info for a direct read (and graphql-core's resolve info under it), built
    when the read first looks at it: an outline's children and dependencies never do."""

    __slots__ = ("_build", "_built")

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._built: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._built is None:
            self._built = self._build()
        return getattr(self._built, name)


_TEXT: Final = frozenset({GraphQLID, GraphQLString})
"""Scalars whose serialisation of a ``str`` is the ``str`` itself."""


Selected = tuple[str, str, "DirectRead | None", FieldDetailsList, Any]
"""A selected field: its response key, its name (the type's name for ``__typename``), its direct
read (None for ``__typename``), its own selection, and its leaf type when it is a scalar or an enum."""


_PLANS: weakref.WeakKeyDictionary[GraphQLSchema, dict[str, Coerce | None]] = weakref.WeakKeyDictionary()
"""Each schema's list variable types as written, with how a value of each is coerced (``schema.variables``)."""
_READS: weakref.WeakKeyDictionary[GraphQLSchema, dict[tuple[str, str], DirectRead | None]] = weakref.WeakKeyDictionary()


def direct_read(schema: GraphQLSchema, type_name: str, field_name: str) -> DirectRead | None:
    """How ``type_name.field_name`` is read directly, or None when it needs its resolver (worked out once per schema)."""
    reads = _READS.get(schema)
    if reads is None:
        reads = _READS[schema] = {}
    key = (type_name, field_name)
    try:
        return reads[key]
    except KeyError:
        found = reads[key] = _plan(schema, type_name, field_name)
        return found


def _plan(schema: GraphQLSchema, type_name: str, field_name: str) -> DirectRead | None:
    strawberry_schema = getattr(schema, "_strawberry_schema", None)
    graphql_type = schema.get_type(type_name)
    if strawberry_schema is None or not isinstance(graphql_type, GraphQLObjectType):
        return None
    definition = graphql_type.fields.get(field_name)
    if definition is None or definition.args:
        return None
    field = strawberry_schema.get_field_for_type(field_name, type_name)
    if not isinstance(field, StrawberryField) or field.permission_classes or field.extensions:
        return None
    resolver = field.base_resolver
    if resolver is None:  # an attribute
        if field.default_resolver is not getattr:
            return None
        name = field.python_name
        return DirectRead(field, definition, lambda source: getattr(source, name), wants_info=False)
    function = resolver.wrapped_func
    if isinstance(function, staticmethod | classmethod) or not callable(function):
        return None
    if resolver.is_async or inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
        return None
    parameters = list(inspect.signature(function).parameters)
    if parameters == ["self"]:
        return DirectRead(field, definition, function, wants_info=False)
    if parameters == ["self", "info"] and resolver.info_parameter is not None:
        return DirectRead(field, definition, function, wants_info=True)
    return None
