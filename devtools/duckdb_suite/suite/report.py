"""Figures of a run (results.jsonl) as a Markdown report, and the per-query diff of two runs."""

from __future__ import annotations

import collections
import json

COMPARED = ("identical", "refused", "different", "gateway_error")


def _lines(path: str) -> list:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_split(results_path: str, files_path: str):
    """The query records (results.jsonl) and the file records (files.jsonl) of a run."""
    return _lines(results_path), _lines(files_path)


def _pct(n: int, total: int) -> str:
    return f"{100.0 * n / total:.2f}%" if total else "-"


def _sql_line(sql: str, width: int = 110) -> str:
    one = " ".join(sql.split())
    one = one if len(one) <= width else one[: width - 1] + "…"
    return one.replace("|", "\\|")


def summarize(queries: list, files: list) -> dict:
    by_class = collections.Counter(q["class"] for q in queries)
    total = sum(by_class[c] for c in COMPARED)
    reasons = collections.defaultdict(collections.Counter)
    constructs = collections.defaultdict(collections.Counter)
    examples = {}
    examples_by_construct = []
    for q in queries:
        key = (q["class"], q.get("reason", ""))
        reasons[q["class"]][key[1]] += 1
        examples.setdefault(key, q)
        construct = (q.get("detail") or {}).get("construct") if isinstance(q.get("detail"), dict) else None
        if construct:
            constructs[key][construct] += 1
            if q["class"] == "refused":
                examples_by_construct.append((construct.split(" (", 1)[0], q))
    file_skips = collections.Counter(f["file_skipped"] for f in files if "file_skipped" in f)
    return {
        "compared": total,
        "by_class": dict(by_class),
        "failing": total - by_class["identical"],
        "reasons": {c: dict(r) for c, r in reasons.items()},
        "files": len(files),
        "files_used": sum(1 for f in files if "file_skipped" not in f and "harness_error" not in f),
        "file_skips": dict(file_skips),
        "harness_errors": sum(1 for f in files if "harness_error" in f),
        "examples": examples,
        "constructs": constructs,
        "examples_by_construct": examples_by_construct,
    }


def markdown(summary: dict, meta: dict) -> str:
    s = summary
    total = s["compared"]
    out = []
    out.append("# DuckDB's sqllogictest suite through duckgate\n")
    for k, v in meta.items():
        out.append(f"- {k}: {v}")
    out.append("")
    out.append(f"{s['files']} test files, {s['files_used']} run; {total} read-only queries compared "
               f"with in-process DuckDB on the same database file.\n")
    out.append("| class | queries | share |")
    out.append("|---|---:|---:|")
    for c in COMPARED:
        n = s["by_class"].get(c, 0)
        out.append(f"| {c} | {n} | {_pct(n, total)} |")
    out.append(f"| **not identical** (refused + different + gateway_error) | **{s['failing']}** | **{_pct(s['failing'], total)}** |")
    out.append("")
    for c in ("refused", "different", "gateway_error"):
        r = s["reasons"].get(c, {})
        if not r:
            continue
        out.append(f"## {c}: by reason\n")
        out.append("| reason | queries | constructs named (‹C›) | example |")
        out.append("|---|---:|---|---|")
        for reason, n in sorted(r.items(), key=lambda kv: (-kv[1], kv[0])):
            ex = s["examples"][(c, reason)]
            where = f"`{ex['file']}:{ex['line']}`"
            named = s["constructs"].get((c, reason), collections.Counter())
            top = ", ".join(f"{k} ({v})" for k, v in named.most_common(5)).replace("|", "/")
            if len(named) > 5:
                top += f", … ({len(named)} in all)"
            out.append(f"| {reason.replace('|', '/')} | {n} | {top} | {where} `{_sql_line(ex['sql'])}` |")
        out.append("")
    by_construct = collections.Counter()
    construct_example = {}
    for (c, _reason), named in s["constructs"].items():
        if c != "refused":
            continue
        for construct, n in named.items():
            # DuckDB's own words after the construct (a serialiser's message) vary per query.
            short = construct.split(" (", 1)[0]
            by_construct[short] += n
    for q in s["examples_by_construct"]:
        construct_example.setdefault(q[0], q[1])
    if by_construct:
        out.append("## refused: by construct (what duckgate named)\n")
        out.append("| construct | queries | example |")
        out.append("|---|---:|---|")
        for construct, n in by_construct.most_common(40):
            ex = construct_example.get(construct)
            where = f"`{ex['file']}:{ex['line']}` `{_sql_line(ex['sql'])}`" if ex else ""
            out.append(f"| {construct.replace('|', '/')} | {n} | {where} |")
        if len(by_construct) > 40:
            rest = sum(n for _, n in by_construct.most_common()[40:])
            out.append(f"| … {len(by_construct) - 40} more | {rest} | |")
        out.append("")
    r = s["reasons"].get("skipped", {})
    if r:
        out.append("## Queries not compared, and why\n")
        out.append("| reason | queries |")
        out.append("|---|---:|")
        for reason, n in sorted(r.items(), key=lambda kv: -kv[1]):
            out.append(f"| {reason} | {n} |")
        out.append("")
    if s["file_skips"]:
        out.append("## Test files left out, and why\n")
        out.append("| reason | files |")
        out.append("|---|---:|")
        for reason, n in sorted(s["file_skips"].items(), key=lambda kv: -kv[1]):
            out.append(f"| {reason} | {n} |")
        out.append("")
    if s["harness_errors"]:
        out.append(f"**{s['harness_errors']} files hit a harness error** (see files.jsonl).\n")
    return "\n".join(out)


def diff(before_path: str, after_path: str) -> str:
    """Per query: what changed class or reason between two runs (matched by query id)."""
    before = _lines(before_path)
    after = _lines(after_path)
    a = {q["id"]: q for q in before}
    b = {q["id"]: q for q in after}
    transitions = collections.Counter()
    changed = []
    for qid in sorted(set(a) | set(b)):
        qa, qb = a.get(qid), b.get(qid)
        ka = (qa["class"], qa.get("reason", "")) if qa else ("absent", "")
        kb = (qb["class"], qb.get("reason", "")) if qb else ("absent", "")
        if ka != kb or (qa and qb and qa.get("got", {}).get("digest") != qb.get("got", {}).get("digest")):
            transitions[(ka[0], kb[0])] += 1
            changed.append((qid, ka, kb, (qb or qa)["sql"]))
    out = ["| before | after | queries |", "|---|---|---:|"]
    for (x, y), n in sorted(transitions.items(), key=lambda kv: -kv[1]):
        out.append(f"| {x} | {y} | {n} |")
    out.append("")
    for qid, ka, kb, sql in changed:
        out.append(f"- `{qid}`: {ka[0]} ({ka[1]}) → {kb[0]} ({kb[1]}): `{_sql_line(sql, 90)}`")
    return "\n".join(out)
