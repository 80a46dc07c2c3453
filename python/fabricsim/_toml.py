"""Writes the resolved scenario (``summary.json``'s ``scenario``, JSON) back as scenario TOML, so a
report shows it in the form a scenario file has and it can be rerun as it stands.

TOML has no null: keys whose value is null (an unset optional key) are left out, which is what
leaving them out of a scenario file means. A null inside an array has no TOML form:
:func:`dumps` then raises ``ValueError`` (the report falls back to the JSON).
"""

from __future__ import annotations

from typing import Any, Dict, List

from ._scenario import toml_key, toml_value

#: Top-level tables in the order a scenario file usually has them (the JSON's keys are sorted).
_SECTION_ORDER = ("topology", "switch", "transport", "workload", "results", "run")
#: Keys that say what a table is: first in their table.
_FIRST = ("kind", "name", "seed")


def _without_nulls(value: Any) -> Any:
    """``value`` with the null-valued keys of every table left out."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        if any(v is None for v in value):
            raise ValueError("a null inside an array has no TOML form")
        return [_without_nulls(v) for v in value]
    return value


def _ordered(table: Dict[str, Any]) -> List[Any]:
    return sorted(table.items(), key=lambda kv: _FIRST.index(kv[0]) if kv[0] in _FIRST else len(_FIRST))


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def _table(path: List[str], table: Dict[str, Any], out: List[str], header: str) -> None:
    """Appends ``table``: its header (unless top level), its plain keys, then its sub-tables and
    arrays of tables, whose headers name their full path."""
    if header:
        out.append(header)
    subs = []
    for k, v in _ordered(table):
        if isinstance(v, dict) or _is_table_array(v):
            subs.append((k, v))
        else:
            out.append(f"{toml_key(k)} = {toml_value(v, k)}")
    if not path:
        subs.sort(key=lambda kv: _SECTION_ORDER.index(kv[0]) if kv[0] in _SECTION_ORDER else len(_SECTION_ORDER))
    for k, v in subs:
        sub = path + [toml_key(k)]
        for element in [v] if isinstance(v, dict) else v:
            out.append("")
            _table(sub, element, out, f"[{'.'.join(sub)}]" if isinstance(v, dict) else f"[[{'.'.join(sub)}]]")


def dumps(document: Dict[str, Any]) -> str:
    """``document`` (a JSON object) as TOML text; null values are left out.

    Raises:
        ValueError: a value with no TOML form (a null inside an array).
    """
    out: List[str] = []
    _table([], _without_nulls(document), out, "")
    return "\n".join(out).lstrip("\n") + "\n"
