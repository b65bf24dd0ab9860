"""The field rules the Kubernetes API server applies beyond its OpenAPI schemas, as small
predicates (apimachinery's ``util/validation`` and ``api/validation``): DNS names, qualified
names, label values, IANA service names, ports, percentages, enums.

Each rule of the kinds' modules yields a ``Finding``: the field path as the API server writes
it (``spec.template.spec.containers[0].ports[1].name``), the value, and what it must be.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from functools import wraps
from typing import Any, NamedTuple, TypeVar

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
QUALIFIED_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
IANA_SVC_NAME = re.compile(r"[-a-z0-9]+")
PERCENT = re.compile(r"[0-9]+%")
ENV_VAR_NAME = re.compile(
    r"[ -<>-~]+"
)  # printable ASCII but '=' (1.33: RelaxedEnvironmentVariableValidation)

LABEL_MAX = 63
MEMO_MAX = 1 << 16
SUBDOMAIN_MAX = 253


class Finding(NamedTuple):
    path: str
    value: Any
    rule: str

    def __str__(self) -> str:
        shown = (
            json.dumps(self.value, sort_keys=True, default=str)
            if isinstance(self.value, dict | list)
            else repr(self.value)
        )
        if len(shown) > 80:
            shown = shown[:77] + "..."
        return f"{self.path}: {shown}: {self.rule}"


Findings = Iterator[Finding]
Predicate = Callable[[Any], "str | None"]
T = TypeVar("T")


def memoised(rule: Callable[[Any], T]) -> Callable[[Any], T]:
    """``rule`` remembering its verdicts: the same keys and names recur in every document, and a
    dictionary look-up is cheaper than a regular expression (compile once, judge each text once)."""
    seen: dict[Any, T] = {}

    @wraps(rule)
    def judged(value: Any) -> T:
        try:
            return seen[value]
        except KeyError:
            if len(seen) >= MEMO_MAX:  # bounded: a run with more distinct texts starts afresh
                seen.clear()
            said = seen[value] = rule(value)
            return said
        except TypeError:  # a list or mapping where a text belongs
            return rule(value)

    return judged


@memoised
def dns_label(value: Any) -> str | None:
    if not isinstance(value, str) or len(value) > LABEL_MAX or not DNS_LABEL.fullmatch(value):
        return (
            f"must be a DNS-1123 label: at most {LABEL_MAX} lowercase letters, digits and '-', "
            "starting and ending with a letter or digit"
        )
    return None


@memoised
def dns1035_label(value: Any) -> str | None:
    if not isinstance(value, str) or len(value) > LABEL_MAX or not DNS1035_LABEL.fullmatch(value):
        return (
            f"must be a DNS-1035 label: at most {LABEL_MAX} lowercase letters, digits and '-', "
            "starting with a letter and ending with a letter or digit"
        )
    return None


@memoised
def dns_subdomain(value: Any) -> str | None:
    if not isinstance(value, str) or len(value) > SUBDOMAIN_MAX or not DNS_SUBDOMAIN.fullmatch(value):
        return (
            f"must be a DNS-1123 subdomain: at most {SUBDOMAIN_MAX} lowercase letters, digits, '-' and '.', "
            "starting and ending with a letter or digit"
        )
    return None


def path_segment(value: Any) -> str | None:
    """RBAC objects' names: anything a URL path segment can hold."""
    if not isinstance(value, str) or value in (".", "..") or "/" in value or "%" in value:
        return "may not be '.' or '..' and may not contain '/' or '%'"
    return None


@memoised
def qualified_name(value: Any) -> str | None:
    """A label or annotation key: ``[prefix/]name``, the prefix a DNS subdomain."""
    if not isinstance(value, str):
        return "must be a string"
    prefix, slash, name = value.rpartition("/")
    if slash and (not prefix or dns_subdomain(prefix)):
        return (
            f"must be a qualified name: its prefix before '/' {dns_subdomain(prefix) or 'must not be empty'}"
        )
    if not name or len(name) > LABEL_MAX or not QUALIFIED_PART.fullmatch(name):
        return (
            f"must be a qualified name: [a DNS subdomain and '/'] then at most {LABEL_MAX} letters, digits, "
            "'-', '_' and '.', starting and ending with a letter or digit"
        )
    return None


@memoised
def label_value(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be a string"
    if value and (len(value) > LABEL_MAX or not QUALIFIED_PART.fullmatch(value)):
        return (
            f"must be a label value: empty or at most {LABEL_MAX} letters, digits, '-', '_' and '.', "
            "starting and ending with a letter or digit"
        )
    return None


@memoised
def iana_svc_name(value: Any) -> str | None:
    """A port's name (IANA service name syntax, RFC 6335)."""
    ok = (
        isinstance(value, str)
        and 0 < len(value) <= 15
        and IANA_SVC_NAME.fullmatch(value) is not None
        and "--" not in value
        and not value.startswith("-")
        and not value.endswith("-")
        and any(c.isalpha() for c in value)
    )
    if not ok:
        return (
            "must be an IANA service name: at most 15 lowercase letters, digits and '-', "
            "at least one letter, no '-' at either end or twice in a row"
        )
    return None


def port_number(value: Any, low: int = 1) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= 65535:
        return f"must be between {low} and 65535, inclusive"
    return None


def port_or_name(value: Any) -> str | None:
    """An int-or-string port: a number 1-65535 or an IANA service name."""
    return port_number(value) if isinstance(value, int) else iana_svc_name(value)


def int_or_percent(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return None if value >= 0 else "must be greater than or equal to 0"
    if not isinstance(value, str) or not PERCENT.fullmatch(value):
        return "must be an integer or a percentage (a number followed by '%', such as 25%)"
    return None


def non_negative(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return "must be greater than or equal to 0"
    return None


def one_of(value: Any, allowed: Iterable[str]) -> str | None:
    allowed = tuple(allowed)
    if value not in allowed:
        return "supported values: " + ", ".join(f'"{a}"' for a in allowed)
    return None


def check(path: str, value: Any, *rules: Any) -> Findings:
    """Each rule (a predicate above, or a function value -> rule text) applied to ``value``."""
    for rule in rules:
        said = rule(value)
        if said:
            yield Finding(path, value, said)
            return


def optional(body: dict[str, Any], key: str, path: str, *rules: Any) -> Findings:
    """``check`` on ``body[key]`` when it is set (not absent, not null)."""
    value = body.get(key)
    if value is not None:
        yield from check(f"{path}.{key}" if path else key, value, *rules)


def items(body: dict[str, Any], key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The mapping items of the list ``body[key]`` with their index (the schema has the rest)."""
    value = body.get(key)
    for index, item in enumerate(value if isinstance(value, list) else ()):
        if isinstance(item, dict):
            yield index, item


def mapping(body: dict[str, Any], key: str) -> dict[str, Any]:
    value = body.get(key)
    return value if isinstance(value, dict) else {}
