"""XML as GraphML and GEXF write it: attribute keys typed as their values come, and escaping."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final
from xml.sax.saxutils import escape

from decisiontrail.exports.document import as_text

__all__ = ["TypedKeys", "key_id", "xml_attr", "xml_text"]


_GRAPHML_TYPES: Final = {bool: "boolean", int: "long", float: "double", str: "string"}
"""``_graphml_type`` of the values a decision graph holds, by their exact type (a lookup, where
``isinstance`` one after another was a tenth of an export); a subclass goes the long way."""


def _graphml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "long"
    if isinstance(value, float):
        return "double"
    return "string"


def _widen(types: dict[str, str], name: str, kind: str) -> None:
    # A name whose values mix types is a string; ints mixed with floats a double.
    seen = types.setdefault(name, kind)
    if seen != kind:
        types[name] = "double" if {seen, kind} == {"long", "double"} else "string"


class TypedKeys:
    """GraphML's and GEXF's typed keys, learnt from the data as it is written: a name's type
    widens as values of other types come (so the keys are declared last). A key's id is made of
    its domain and name (``key_id``), so parts made apart agree on it."""

    def __init__(self) -> None:
        self.types: dict[str, dict[str, str]] = {"graph": {}, "node": {}, "edge": {"type": "string"}}
        self.ids: dict[str, dict[str, str]] = {"graph": {}, "node": {}, "edge": {}}

    def data(self, domain: str, attrs: Mapping[str, Any]) -> str:
        """``attrs`` as ``<data>`` elements of ``domain``'s keys."""
        # Run for every value of an export: the common cases inline (a str needs no conversion, a
        # value of a plain type has its key type by lookup, most text nothing to escape).
        types, ids = self.types[domain], self.ids[domain]
        special = _XML_TEXT_SPECIAL.search
        parts = []
        for name, value in attrs.items():
            key = ids.get(name)
            if key is None:
                key = ids[name] = key_id(domain, name)
            kind = _GRAPHML_TYPES.get(type(value)) or _graphml_type(value)
            if types.get(name) != kind:
                _widen(types, name, kind)
            # An int under a double key is still a valid xsd:double ("1"), so values need no retyping.
            text = value if type(value) is str else as_text(value)
            if special(text) is not None:
                text = xml_text(text)
            parts.append(f'<data key="{key}">{text}</data>')
        return "".join(parts)

    def attvalues(self, domain: str, attrs: Mapping[str, Any]) -> str:
        """``attrs`` as GEXF's ``<attvalues>`` of ``domain``'s keys."""
        if not attrs:
            return ""
        types, ids = self.types[domain], self.ids[domain]
        parts = []
        for name, value in attrs.items():
            key = ids.get(name)
            if key is None:
                key = ids[name] = key_id(domain, name)
            kind = _GRAPHML_TYPES.get(type(value)) or _graphml_type(value)
            if types.get(name) != kind:
                _widen(types, name, kind)
            parts.append(f'<attvalue for="{key}" value={xml_attr(as_text(value))}/>')
        return f"<attvalues>{''.join(parts)}</attvalues>"

    def learn(self, types: Mapping[str, Mapping[str, str]]) -> None:
        """Take in the types another ``TypedKeys`` learnt (a part's), in its order."""
        for domain, named in types.items():
            for name, kind in named.items():
                if self.types[domain].get(name) != kind:
                    _widen(self.types[domain], name, kind)

    def declarations(self) -> Iterator[str]:
        for domain, types in self.types.items():
            for name, kind in types.items():
                yield f'<key id="{key_id(domain, name)}" for="{domain}" attr.name={xml_attr(name)} attr.type="{kind}"/>\n'


def key_id(domain: str, name: str) -> str:
    """A key's id: the domain's initial and the name, a character past ``[A-Za-z0-9_]`` as ``-<hex>-``
    (an NMTOKEN, as GraphML asks, and one name to one id).

    >>> key_id("node", "decision_type"), key_id("edge", "a b")
    ('n.decision_type', 'e.a-20-b')
    """
    return f"{domain[0]}." + _KEY_ESCAPES.sub(lambda m: f"-{ord(m[0]):x}-", name)


_KEY_ESCAPES: Final = re.compile(r"[^A-Za-z0-9_]")


# Outside XML 1.0's Char production: C0 controls but tab, newline and return; surrogates; U+FFFE, U+FFFF.
_OUTSIDE_XML: Final = "\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff"
_NOT_XML: Final = re.compile(f"[{_OUTSIDE_XML}]")


# What text or an attribute value cannot hold as it is: markup, the characters each spells as a
# reference, and what is outside XML. Most values have none, and one search tells (the
# substitution and the escapes, run on every value, were two fifths of a GraphML export).
_XML_TEXT_SPECIAL: Final = re.compile(f"[&<>\r{_OUTSIDE_XML}]")
_XML_ATTR_SPECIAL: Final = re.compile(f'[&<>"\n\r\t{_OUTSIDE_XML}]')


def xml_text(text: str) -> str:
    """Text as an element's content: markup escaped, a return kept, what XML cannot hold replaced."""
    if _XML_TEXT_SPECIAL.search(text) is None:
        return text
    # A raw return would be read back as a newline; the character reference keeps it.
    return escape(_NOT_XML.sub("\ufffd", text), {"\r": "&#13;"})


def xml_attr(text: str) -> str:
    """Text as an attribute's quoted value, the whitespace XML would normalise kept as references."""
    if _XML_ATTR_SPECIAL.search(text) is None:
        return '"' + text + '"'
    entities = {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}
    return '"' + escape(_NOT_XML.sub("\ufffd", text), entities) + '"'
