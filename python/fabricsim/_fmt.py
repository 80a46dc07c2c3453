"""Number formatting shared by the plots and the HTML report: every figure is printed with its
unit, byte counts also in binary prefixes."""

from __future__ import annotations

import math
from typing import Optional

_BINARY = ("B", "KiB", "MiB", "GiB", "TiB")
_DECIMAL = ("B", "kB", "MB", "GB", "TB")


def size(n: float) -> str:
    """A byte count with a prefix and at most 3 significant digits: binary when that is exact
    (``64 KiB``, ``1.5 MiB``), else decimal (``10 kB``, ``1.96 MB``)."""
    if abs(float(f"{n:.3g}")) < 1000:
        return f"{n:.3g} B"
    k = 0
    while k < len(_BINARY) - 1 and abs(n) >= 1024 ** (k + 1):
        k += 1
    if k and float(f"{n / 1024 ** k:.3g}") == n / 1024 ** k:
        return f"{n / 1024 ** k:.3g} {_BINARY[k]}"
    k = 0
    # Rounding to 3 digits may reach 1000 (999,999 B): then the next prefix.
    while k < len(_DECIMAL) - 1 and abs(float(f"{n / 1000 ** k:.3g}")) >= 1000:
        k += 1
    return f"{n / 1000 ** k:.3g} {_DECIMAL[k]}"


def size_range(lo: float, hi: float) -> str:
    """A byte range ``lo`` to ``hi`` in few characters: ``1–10 kB``, ``100 B–1 kB``."""
    a, b = size(lo), size(hi)
    (av, au), (bv, bu) = a.split(" "), b.split(" ")
    return f"{av}–{bv} {bu}" if au == bu else f"{a}–{b}"


def number(x: Optional[float], decimals: int = 3) -> str:
    """``x`` with thousands separators: integers (and integral floats) as such, other floats
    with ``decimals`` decimals, or 3 significant digits when that would print 0 (a loss rate
    of 1e-5); ``–`` for a missing value (None, NaN, or an empty text)."""
    if x is None or x == "" or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int) or (float(x).is_integer() and abs(x) < 1e15):
        return f"{int(x):,}"
    text = f"{x:,.{decimals}f}"
    return text if text.strip("-0.,") else f"{x:.3g}"
