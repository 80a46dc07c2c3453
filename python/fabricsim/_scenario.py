"""Scenarios and overrides given from Python, turned into what the Rust library reads:
TOML text (a dict becomes inline-table TOML) and ``key.path=value`` override strings (as the
CLI's ``--set``)."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, List, Optional, Tuple, Union

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]
Overrides = Union[None, str, Mapping[str, Any], Iterable[str]]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def toml_key(key: str) -> str:
    """A TOML key: bare when it may be, else a quoted string."""
    return key if _BARE_KEY.fullmatch(key) else toml_value(key, key)


def toml_value(value: Any, where: str = "value") -> str:
    """``value`` as a TOML literal (inline tables for mappings); ``where`` names it in errors."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        out = ['"']
        for ch in value:
            if ch in '"\\':
                out.append("\\" + ch)
            elif ord(ch) < 0x20 or ord(ch) == 0x7F:
                out.append(f"\\u{ord(ch):04X}")
            else:
                out.append(ch)
        out.append('"')
        return "".join(out)
    if isinstance(value, Mapping):
        items = [f"{toml_key(str(k))} = {toml_value(v, f'{where}.{k}')}" for k, v in value.items()]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v, f"{where}[{i}]") for i, v in enumerate(value)) + "]"
    raise TypeError(f"`{where}`: cannot write a {type(value).__name__} as TOML (use bool, int, float, str, list or dict)")


def dict_to_toml(scenario: Mapping[str, Any]) -> str:
    """A scenario dict (nested as the TOML file is) as TOML text, one line per top-level key."""
    return "".join(f"{toml_key(str(k))} = {toml_value(v, str(k))}\n" for k, v in scenario.items())


def source(scenario: Scenario) -> Tuple[str, bool]:
    """``(text or path, is_path)``: a path-like or a one-line string without ``=`` is a file
    name, any other string TOML text, a mapping a scenario dict."""
    if isinstance(scenario, os.PathLike):
        return os.fspath(scenario), True
    if isinstance(scenario, str):
        is_text = "\n" in scenario or "=" in scenario
        return scenario, not is_text
    if isinstance(scenario, Mapping):
        return dict_to_toml(scenario), False
    raise TypeError(f"scenario must be a path, TOML text or a dict, not {type(scenario).__name__}")


def override_list(overrides: Overrides, seed: Optional[int]) -> List[str]:
    """Override strings ``key.path=value``: from a dict (values written as TOML literals, so
    ``"2"`` stays a string), a list of CLI-style strings, or one such string; ``seed`` last."""
    if overrides is None:
        out: List[str] = []
    elif isinstance(overrides, str):
        out = [overrides]
    elif isinstance(overrides, Mapping):
        out = [f"{k}={toml_value(v, str(k))}" for k, v in overrides.items()]
    else:
        out = [str(o) for o in overrides]
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed must be an int, not {type(seed).__name__}")
        out.append(f"seed={seed}")
    return out
