"""DuckDB's answer, rendered in the JSON shapes duckgate documents for its `query` tool.

The shapes are those of duckgate's VALUE_ENCODING (src/engine/convert/mod.rs): integers as JSON
numbers up to 2^53-1 and strings beyond; DECIMAL and BIGNUM as strings of exact digits;
FLOAT/DOUBLE as numbers or "NaN"/"Infinity"/"-Infinity"; DATE, TIME, TIMESTAMP as ISO 8601;
TIMESTAMPTZ as local time with its offset (`Z` in UTC); TIMESTAMPTZ_NS with `+00:00` in UTC;
INTERVAL as an ISO 8601 duration with a sign per component; TIME WITH TIME ZONE and TIME_NS as
DuckDB's text; BLOB and GEOMETRY as base64; BIT as its 0/1 text; UUID, ENUM as text; JSON as its
text; VARIANT as its JSON value (as text when a number would not survive a double); LIST/ARRAY
as arrays; STRUCT as an object in field order; an unnamed STRUCT (TUPLE) as an array; MAP as an
array of {"key", "value"}; UNION as its member's value.

The rendering here is written from that contract, not from duckgate's code, so a rendering bug
in duckgate shows up as a difference. Python's DuckDB client decodes some types lossily
(INTERVAL to timedelta, infinite and BC dates, nanoseconds, time zones); for those the query is
wrapped so that DuckDB casts those parts to its own text (VARIANT to JSON), and that text is
rendered here by the column's original type (`twin_type`).
"""

from __future__ import annotations

import base64
import decimal
import json
import math
import re
import struct

MAX_SAFE_INTEGER = 2**53 - 1

# Types whose values Python's client decodes lossily: DuckDB casts them to text first.
TEXT_TWIN = {
    "interval",
    "date",
    "time",
    "time_ns",
    "time with time zone",
    "timestamp",
    "timestamp_s",
    "timestamp_ms",
    "timestamp_ns",
    "timestamp with time zone",
    "timestamptz_ns",
}


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def twin_type(t):
    """The SQL type to cast a column of DuckDB type `t` to so that Python receives every part
    losslessly, or None when `t` itself is fine."""
    changed, text = _twin(t, top=True)
    return text if changed else None


def _children(t):
    return list(t.children)


def _twin(t, top=False):
    tid = t.id
    if tid in TEXT_TWIN:
        return True, "VARCHAR"
    if tid == "variant":
        return True, "JSON"
    if tid == "list":
        changed, child = _twin(_children(t)[0][1])
        return changed, f"{child}[]"
    if tid == "array":
        kids = dict(_children(t))
        changed, child = _twin(kids["child"])
        return changed, f"{child}[{kids['size']}]"
    if tid == "map":
        kids = dict(_children(t))
        ck, k = _twin(kids["key"])
        cv, v = _twin(kids["value"])
        return ck or cv, f"MAP({k}, {v})"
    if tid in ("struct", "tuple"):
        kids = _children(t)
        if not kids:
            return False, str(t)
        parts = []
        changed = False
        for i, (name, child) in enumerate(kids):
            c, text = _twin(child)
            changed |= c
            # A tuple's members get names so the cast can be written; rendering knows it is a
            # tuple from the original type.
            parts.append(f"{quote_ident(name if tid == 'struct' else f'f{i + 1}')} {text}")
        return changed, f"STRUCT({', '.join(parts)})"
    if tid == "union":
        members = [(n, c) for n, c in _children(t) if n != ""]
        parts = []
        changed = False
        for name, child in members:
            c, text = _twin(child)
            changed |= c
            parts.append(f"{quote_ident(name)} {text}")
        return changed, f"UNION({', '.join(parts)})"
    return False, str(t)


def union_members(t):
    return [(n, c) for n, c in _children(t) if n != ""]


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------


def integer(v: int):
    return v if -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER else str(v)


def double(v: float):
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def single(v: float):
    """A FLOAT: its shortest decimal text as a 32-bit float, read as a double (the decimal a
    reader of the FLOAT means, not the double nearest its bits)."""
    if math.isnan(v) or math.isinf(v):
        return double(v)
    bits = struct.pack("<f", v)
    for digits in range(1, 10):
        text = "%.*g" % (digits, v)
        try:
            if struct.pack("<f", float(text)) == bits:
                return float(text)
        except OverflowError:
            # Rounded past FLOAT's largest value: more digits are needed.
            continue
    return v


def decimal_text(v) -> str:
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    return str(v)


def _iso_year(year: int) -> str:
    return f"-{-year:04d}" if year < 0 else f"{year:04d}"


_DATE = re.compile(r"^(\d+)-(\d\d)-(\d\d)( \(BC\))?$")
_STAMP = re.compile(r"^(\d+)-(\d\d)-(\d\d)( \(BC\))? (\d+):(\d\d):(\d\d)(\.\d+)?([+-]\d\d(?::\d\d(?::\d\d)?)?)?$")


def _frac(frac: str | None) -> str:
    if not frac:
        return ""
    digits = frac[1:].rstrip("0")
    return "." + digits if digits else ""


def _iso_date(m) -> str:
    """`YYYY-MM-DD` of a match whose groups 1-4 are DuckDB's year, month, day and ` (BC)`:
    astronomical years, so 45 BC is -0044."""
    year = int(m.group(1))
    if m.group(4):
        year = 1 - year
    return f"{_iso_year(year)}-{m.group(2)}-{m.group(3)}"


def date_text(text: str) -> str:
    if text in ("infinity", "-infinity"):
        return text
    m = _DATE.match(text)
    if not m:
        raise ValueError(f"unexpected DATE text {text!r}")
    return _iso_date(m)


def time_text(text: str) -> str:
    m = re.match(r"^(\d+):(\d\d):(\d\d)(\.\d+)?$", text)
    if not m:
        raise ValueError(f"unexpected TIME text {text!r}")
    return f"{int(m.group(1)):02d}:{m.group(2)}:{m.group(3)}{_frac(m.group(4))}"


def _offset_seconds(off: str) -> int:
    sign = -1 if off[0] == "-" else 1
    parts = [int(p) for p in off[1:].split(":")]
    while len(parts) < 3:
        parts.append(0)
    return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2])


def timestamp_text(text: str, zone: str | None) -> str:
    """DuckDB's TIMESTAMP text as ISO 8601. `zone`: None for a TIMESTAMP, "Z" for a TIMESTAMPTZ
    (UTC: `Z`), "offset" for a TIMESTAMPTZ_NS (UTC: `+00:00`)."""
    if text in ("infinity", "-infinity"):
        return text
    m = _STAMP.match(text)
    if not m:
        raise ValueError(f"unexpected TIMESTAMP text {text!r}")
    out = f"{_iso_date(m)}T{int(m.group(5)):02d}:{m.group(6)}:{m.group(7)}{_frac(m.group(8))}"
    off = m.group(9)
    if zone is None:
        if off:
            raise ValueError(f"unexpected offset in TIMESTAMP text {text!r}")
        return out
    if off is None:
        raise ValueError(f"no offset in TIMESTAMPTZ text {text!r}")
    seconds = _offset_seconds(off)
    if seconds == 0 and zone == "Z":
        return out + "Z"
    sign = "-" if seconds < 0 else "+"
    a = abs(seconds)
    suffix = f"{sign}{a // 3600:02d}:{(a // 60) % 60:02d}"
    if a % 60:
        suffix += f":{a % 60:02d}"
    return out + suffix


def interval_parts(text: str):
    """DuckDB's INTERVAL text (`1 year 2 months -3 days -04:05:06.5`) as (months, days, micros)."""
    months = days = micros = 0
    words = text.split()
    i = 0
    while i < len(words):
        w = words[i]
        if ":" in w:
            neg = w.startswith("-")
            h, mi, s = w.lstrip("-").split(":")
            whole, _, frac = s.partition(".")
            total = ((int(h) * 60 + int(mi)) * 60 + int(whole)) * 1_000_000 + int((frac + "000000")[:6])
            micros = -total if neg else total
            i += 1
            continue
        count = int(w)
        unit = words[i + 1].rstrip("s")
        if unit == "year":
            months += 12 * count
        elif unit == "month":
            months += count
        elif unit == "day":
            days += count
        else:
            raise ValueError(f"unexpected INTERVAL text {text!r}")
        i += 2
    return months, days, micros


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def interval_iso(months: int, days: int, micros: int) -> str:
    out = "P"
    years = _trunc_div(months, 12)
    rest = months - years * 12
    if years:
        out += f"{years}Y"
    if rest:
        out += f"{rest}M"
    if days:
        out += f"{days}D"
    if micros:
        out += "T"
        sign = "-" if micros < 0 else ""
        a = abs(micros)
        hours, minutes, secs, frac = a // 3_600_000_000, (a // 60_000_000) % 60, (a // 1_000_000) % 60, a % 1_000_000
        if hours:
            out += f"{sign}{hours}H"
        if minutes:
            out += f"{sign}{minutes}M"
        if secs or frac:
            if frac:
                out += f"{sign}{secs}.{f'{frac:06d}'.rstrip('0')}S"
            else:
                out += f"{sign}{secs}S"
    return "PT0S" if out == "P" else out


def _decimal_value(token: str):
    neg = token.startswith("-")
    body = token.lstrip("-")
    mant, _, exp = body.replace("E", "e").partition("e")
    exp = int(exp) if exp else 0
    whole, _, frac = mant.partition(".")
    digits = whole + frac
    if not digits.isdigit():
        return None
    sig = digits.lstrip("0")
    trimmed = sig.rstrip("0")
    if not trimmed:
        return (False, "", 0)
    return (neg, trimmed, exp - len(frac) + (len(sig) - len(trimmed)))


def _number_survives_double(token: str) -> bool:
    try:
        value = float(token)
    except ValueError:
        return True
    if not math.isfinite(value):
        return False
    integral = not any(c in token for c in ".eE")
    if integral and abs(value) > MAX_SAFE_INTEGER:
        return False
    return _decimal_value(token) == _decimal_value(repr(value))


_JSON_NUMBER = re.compile(r'"(?:\\.|[^"\\])*"|(-?\d[\d.eE+-]*)')


def variant_json(text: str):
    """A VARIANT, cast to JSON by DuckDB: its JSON value, or the text when a number in it would
    not keep its exact value as a double."""
    for m in _JSON_NUMBER.finditer(text):
        if m.group(1) and not _number_survives_double(m.group(1)):
            return text
    try:
        # Strict JSON: NaN and Infinity are not JSON numbers, so such a value stays text.
        return json.loads(text, parse_constant=_not_json)
    except ValueError:
        return text


def _not_json(name):
    raise ValueError(f"{name} is not JSON")


def render(t, v, tag=None):
    """The JSON duckgate should answer for the value `v` (as Python's client returns it after
    the twin cast) of DuckDB type `t`. `tag` is a top-level UNION's member name."""
    if v is None:
        return None
    tid = t.id
    if tid == "boolean":
        return bool(v)
    if tid in ("tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint", "usmallint", "uinteger", "ubigint", "uhugeint"):
        return integer(int(v))
    if tid == "float":
        return single(float(v))
    if tid == "double":
        return double(float(v))
    if tid == "decimal":
        return decimal_text(v)
    if tid in ("varchar", "enum", "bit", "bignum"):
        return str(v)
    if tid in ("blob", "geometry"):
        return base64.b64encode(bytes(v)).decode("ascii")
    if tid == "uuid":
        return str(v)
    if tid == "date":
        return date_text(v)
    if tid == "time":
        return time_text(v)
    if tid in ("time_ns", "time with time zone"):
        return v
    if tid in ("timestamp", "timestamp_s", "timestamp_ms", "timestamp_ns"):
        return timestamp_text(v, None)
    if tid == "timestamp with time zone":
        return timestamp_text(v, "Z")
    if tid == "timestamptz_ns":
        return timestamp_text(v, "offset")
    if tid == "interval":
        return interval_iso(*interval_parts(v))
    if tid == "variant":
        return variant_json(v)
    if tid == "null":
        return None
    if tid == "list":
        child = _children(t)[0][1]
        return [render(child, x) for x in v]
    if tid == "array":
        child = dict(_children(t))["child"]
        return [render(child, x) for x in v]
    if tid == "struct":
        kids = _children(t)
        if isinstance(v, dict):
            return {name: render(child, v[name]) for name, child in kids}
        return {name: render(child, x) for (name, child), x in zip(kids, v)}
    if tid == "tuple":
        kids = _children(t)
        values = list(v.values()) if isinstance(v, dict) else list(v)
        return [render(child, x) for (_, child), x in zip(kids, values)]
    if tid == "map":
        kids = dict(_children(t))
        if isinstance(v, dict) and set(v.keys()) == {"key", "value"} and isinstance(v.get("key"), list):
            pairs = list(zip(v["key"], v["value"]))
        else:
            pairs = list(v.items())
        return [{"key": render(kids["key"], k), "value": render(kids["value"], x)} for k, x in pairs]
    if tid == "union":
        members = union_members(t)
        if tag is not None:
            for name, child in members:
                if name == tag:
                    return render(child, v)
        if len(members) == 1:
            return render(members[0][1], v)
        return untyped(v)
    raise ValueError(f"no rendering for DuckDB type {t}")


def untyped(v):
    """A value whose DuckDB type is not known here (a UNION member below the top level)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return integer(v)
    if isinstance(v, float):
        return double(v)
    if isinstance(v, decimal.Decimal):
        return decimal_text(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, (list, tuple)):
        return [untyped(x) for x in v]
    if isinstance(v, dict):
        return {str(k): untyped(x) for k, x in v.items()}
    return str(v)


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------


def _equal(a, b, ordered: bool, float_equal) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return float_equal(a, b)
    if isinstance(a, list):
        return len(a) == len(b) and all(_equal(x, y, ordered, float_equal) for x, y in zip(a, b))
    if isinstance(a, dict):
        keys_match = list(a) == list(b) if ordered else set(a) == set(b)
        return keys_match and all(_equal(a[k], b[k], ordered, float_equal) for k in a)
    return a == b


def _float_same(a: float, b: float) -> bool:
    return repr(a) == repr(b)


def _float_close(a: float, b: float) -> bool:
    if a == b:
        return True
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def same(a, b) -> bool:
    """Exact equality of two JSON values: the same JSON type and value (1 is not 1.0, true is
    not 1, -0.0 is not 0.0), objects with the same keys in the same order."""
    return _equal(a, b, True, _float_same)


def same_but_key_order(a, b) -> bool:
    """Equal as JSON values once object keys are compared as sets."""
    return _equal(a, b, False, _float_same)


def close(a, b) -> bool:
    """Equal but for the last bits of floating-point numbers (relative 1e-12)."""
    return _equal(a, b, True, _float_close)


def sort_key(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False)
