#!/usr/bin/env python3
"""DuckDB's own sqllogictest suite, asked of duckgate and of in-process DuckDB 2.0.0.

    run.py DUCKGATE --git-dir DUCKDB_GIT_DIR [--rev REV] [--out DIR] [--jobs 2]
    run.py DUCKGATE --tests-root DUCKDB_CHECKOUT ...
    run.py --report OUT_DIR            # rewrite report.md from OUT_DIR/results.jsonl
    run.py --diff BEFORE.jsonl AFTER.jsonl

See README.md beside this file for what is compared and how each query is classified.
"""

from __future__ import annotations

import argparse
import datetime
import fcntl
import hashlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from suite import report  # noqa: E402

BUILD_LOCK = "/tmp/duckgate-build.lock"
DEFAULT_EXTENSIONS = "core_functions,json,icu,parquet"


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def export_tests(git_dir: str, rev: str, target: str) -> str:
    """DuckDB's `test/` tree at `rev`, unpacked under `target` (read from the repository, never
    copied into duckgate's); returns the commit."""
    commit = subprocess.check_output(["git", "--git-dir", git_dir, "rev-parse", rev + "^{commit}"], text=True).strip()
    if os.path.isdir(target):
        shutil.rmtree(target)
    os.makedirs(target)
    archive = subprocess.Popen(["git", "--git-dir", git_dir, "archive", commit, "test"], stdout=subprocess.PIPE)
    subprocess.check_call(["tar", "-x", "-C", target], stdin=archive.stdout)
    if archive.wait() != 0:
        raise SystemExit("git archive failed")
    return commit


def list_tests(tests_root: str, include_slow: bool, pattern: str | None) -> list:
    suffixes = (".test", ".test_slow") if include_slow else (".test",)
    found = []
    for base, dirs, names in os.walk(os.path.join(tests_root, "test")):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(suffixes):
                path = os.path.join(base, name)
                rel = os.path.relpath(path, tests_root)
                if pattern is None or re.search(pattern, rel):
                    found.append((rel, path))
    return found


def probe_extensions(python: str, duckgate: str, scratch: str, duckgate_args: list) -> str | None:
    """The extensions duckgate's DuckDB has loaded, asked of duckgate itself."""
    code = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
import duckdb
from suite import mcp
db = os.path.join(sys.argv[2], "probe.duckdb")
duckdb.connect(db).close()
server = mcp.Server([sys.argv[3], "serve", "--db", db] + json.loads(sys.argv[4]), os.devnull)
try:
    env = server.query("SELECT extension_name FROM duckdb_extensions() WHERE loaded ORDER BY 1", 1000, 60)
finally:
    server.close()
if env.get("error"):
    print("")
else:
    print(",".join(r[0] for r in env["data"]["rows"]))
"""
    os.makedirs(scratch, exist_ok=True)
    try:
        out = subprocess.run([python, "-c", code, HERE, scratch, duckgate, json.dumps(duckgate_args)],
                             capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None
    answer = out.stdout.strip()
    return answer or None


class Worker:
    def __init__(self, index: int, python: str, cfg: dict, lines: queue.Queue):
        self.index = index
        cfg = dict(cfg, worker=index)
        env = dict(os.environ, PYTHONPATH=HERE)
        self.proc = subprocess.Popen([python, "-m", "suite.worker", json.dumps(cfg)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=open(os.path.join(cfg["out"], "logs", f"worker-{index}.log"), "ab"),
                                     cwd=HERE, env=env, start_new_session=True, text=True)
        self.task = None
        self.started = 0.0
        threading.Thread(target=self._read, args=(lines,), daemon=True).start()

    def _read(self, lines: queue.Queue):
        for line in self.proc.stdout:
            lines.put((self, line))
        lines.put((self, None))

    def give(self, task: dict):
        self.task = task
        self.started = time.monotonic()
        self.proc.stdin.write(json.dumps(task) + "\n")
        self.proc.stdin.flush()

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def stop(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()


def write_report(out: str, meta: dict):
    queries, files = report.load_split(os.path.join(out, "results.jsonl"), os.path.join(out, "files.jsonl"))
    summary = report.summarize(queries, files)
    with open(os.path.join(out, "report.md"), "w", encoding="utf-8") as f:
        f.write(report.markdown(summary, meta) + "\n")
    plain = {k: v for k, v in summary.items() if k not in ("examples", "constructs", "examples_by_construct")}
    plain["meta"] = meta
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(plain, f, indent=2)
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("duckgate", nargs="?", help="the duckgate binary to measure (copied into --out first)")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--git-dir", help="a git directory of DuckDB's repository (e.g. the one `fetch github:duckdb/duckdb` gives)")
    src.add_argument("--tests-root", help="a DuckDB checkout (the directory holding test/)")
    ap.add_argument("--rev", default="v2.0.0", help="with --git-dir: the revision whose test/ is used (default v2.0.0)")
    ap.add_argument("--out", help="where results go (default /tmp/duckdb-suite-TIMESTAMP)")
    ap.add_argument("--jobs", type=int, default=2, choices=(1, 2), help="test files run at once (at most 2)")
    ap.add_argument("--filter", help="only test files whose path matches this regular expression")
    ap.add_argument("--max-files", type=int, help="only the first N test files (after --filter)")
    ap.add_argument("--include-slow", action="store_true", help="also the *.test_slow files")
    ap.add_argument("--extensions", help=f"extensions duckgate has, for `require` (default: asked of duckgate; else {DEFAULT_EXTENSIONS})")
    ap.add_argument("--file-budget", type=float, default=240, help="seconds of building per test file before its remaining queries are skipped")
    ap.add_argument("--statement-timeout", type=float, default=60, help="seconds per statement in in-process DuckDB")
    ap.add_argument("--query-timeout", type=float, default=30, help="duckgate's --timeout")
    ap.add_argument("--duckgate-arg", action="append", default=[], help="an extra argument to `duckgate serve` (repeatable)")
    ap.add_argument("--no-lock", action="store_true", help=f"do not take {BUILD_LOCK} (when the caller already holds it)")
    ap.add_argument("--resume", action="store_true", help="keep --out's results and run only the files not done yet")
    ap.add_argument("--report", metavar="OUT_DIR", help="only rewrite OUT_DIR/report.md and summary.json from its results")
    ap.add_argument("--diff", nargs=2, metavar=("BEFORE", "AFTER"), help="per-query changes between two results.jsonl")
    ap.add_argument("--self-test", action="store_true", help="check the oracle's rendering against VALUE_ENCODING's examples (in this venv)")
    args = ap.parse_args()

    if args.self_test:
        from suite import selftest

        sys.exit(selftest.main())

    if args.diff:
        print(report.diff(*args.diff))
        return
    if args.report:
        with open(os.path.join(args.report, "summary.json"), encoding="utf-8") as f:
            meta = json.load(f).get("meta", {})
        write_report(args.report, meta)
        print(open(os.path.join(args.report, "report.md"), encoding="utf-8").read())
        return
    if not args.duckgate or not (args.git_dir or args.tests_root):
        ap.error("give the duckgate binary and --git-dir or --tests-root")

    out = os.path.abspath(args.out or os.path.join(tempfile.gettempdir(), "duckdb-suite-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")))
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    python = os.path.join(HERE, ".venv", "bin", "python")
    if not os.path.exists(python):
        raise SystemExit(f"{python} is missing: run {HERE}/install.sh first")

    lock = None
    if not args.no_lock:
        lock = open(BUILD_LOCK, "a")
        print(f"waiting for {BUILD_LOCK} ...", file=sys.stderr, flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
        print("holding the build lock", file=sys.stderr, flush=True)

    started = time.monotonic()
    # A private copy: target/release/duckgate is rebuilt by others during a long run.
    binary = os.path.join(out, "duckgate")
    if not (args.resume and os.path.exists(binary)):
        shutil.copy2(args.duckgate, binary)
    binary_sha = sha256(binary)

    if args.git_dir:
        tests_root = os.path.join(out, "duckdb-tests")
        commit = export_tests(args.git_dir, args.rev, tests_root)
        source = f"{args.git_dir} at {args.rev} ({commit})"
    else:
        tests_root = os.path.abspath(args.tests_root)
        try:
            commit = subprocess.check_output(["git", "-C", tests_root, "rev-parse", "HEAD"], text=True, stderr=subprocess.DEVNULL).strip()
        except (subprocess.CalledProcessError, FileNotFoundError):
            commit = "unknown"
        source = f"{tests_root} ({commit})"

    scratch = os.path.join(out, "scratch")
    extensions = args.extensions or probe_extensions(python, binary, scratch, args.duckgate_arg)
    extensions_source = "given" if args.extensions else ("asked of duckgate" if extensions else "default")
    extensions = extensions or DEFAULT_EXTENSIONS
    duckdb_version = subprocess.check_output([python, "-c", "import duckdb; print(duckdb.__version__)"], text=True).strip()

    tests = list_tests(tests_root, args.include_slow, args.filter)
    if args.max_files:
        tests = tests[: args.max_files]
    results_path = os.path.join(out, "results.jsonl")
    files_path = os.path.join(out, "files.jsonl")
    done = set()
    if args.resume and os.path.exists(files_path):
        with open(files_path, encoding="utf-8") as f:
            done = {json.loads(line)["done"] for line in f}
        # Drop query lines of files that did not finish.
        with open(results_path, encoding="utf-8") as f:
            kept = [line for line in f if json.loads(line)["file"] in done]
        with open(results_path, "w", encoding="utf-8") as f:
            f.writelines(kept)
    else:
        open(results_path, "w").close()
        open(files_path, "w").close()
    pending = [t for t in tests if t[0] not in done]

    meta = {
        "duckgate": f"{args.duckgate} (sha256 {binary_sha[:16]}…)",
        "in-process DuckDB": duckdb_version,
        "test files from": source,
        "extensions duckgate has": f"{extensions} ({extensions_source})",
        "jobs": args.jobs,
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
    }
    print(json.dumps(meta, indent=2), file=sys.stderr)
    print(f"{len(pending)} test files to run ({len(done)} already done)", file=sys.stderr, flush=True)

    cfg = {
        "duckgate": binary,
        "duckgate_args": args.duckgate_arg,
        "tests_root": tests_root,
        "extensions": extensions.split(","),
        "scratch": scratch,
        "out": out,
        "file_budget": args.file_budget,
        "statement_timeout": args.statement_timeout,
        "query_timeout": args.query_timeout,
    }
    lines: queue.Queue = queue.Queue()
    workers = [Worker(i, python, cfg, lines) for i in range(args.jobs)]
    todo = list(pending)
    results = open(results_path, "a", encoding="utf-8")
    files = open(files_path, "a", encoding="utf-8")
    hard_limit = args.file_budget + 2 * (args.statement_timeout + args.query_timeout) + 600
    finished = 0
    last_note = time.monotonic()

    def assign(w):
        if todo:
            rel, path = todo.pop(0)
            w.give({"rel": rel, "path": path})
        else:
            w.task = None

    for w in workers:
        assign(w)
    try:
        while any(w.task for w in workers):
            try:
                w, line = lines.get(timeout=2)
            except queue.Empty:
                w, line = None, None
            now = time.monotonic()
            for v in workers:
                if v.task and now - v.started > hard_limit:
                    rel = v.task["rel"]
                    v.kill()
                    files.write(json.dumps({"done": rel, "harness_error": f"killed after {hard_limit:.0f} s"}) + "\n")
                    files.flush()
                    finished += 1
                    i = workers.index(v)
                    workers[i] = Worker(i, python, cfg, lines)
                    assign(workers[i])
            if w is None or w not in workers:
                continue
            if line is None:
                if w.task:
                    files.write(json.dumps({"done": w.task["rel"], "harness_error": "worker exited"}) + "\n")
                    files.flush()
                    finished += 1
                    i = workers.index(w)
                    workers[i] = Worker(i, python, cfg, lines)
                    assign(workers[i])
                continue
            rec = json.loads(line)
            if "done" in rec:
                files.write(line if line.endswith("\n") else line + "\n")
                files.flush()
                finished += 1
                assign(w)
                if now - last_note > 30:
                    last_note = now
                    print(f"[{datetime.datetime.now():%H:%M:%S}] {finished}/{len(pending)} files, {now - started:.0f} s", file=sys.stderr, flush=True)
            else:
                results.write(line if line.endswith("\n") else line + "\n")
                results.flush()
    finally:
        for w in workers:
            w.stop()
        results.close()
        files.close()
        shutil.rmtree(scratch, ignore_errors=True)
        if lock:
            lock.close()
    meta["seconds"] = round(time.monotonic() - started)
    summary = write_report(out, meta)
    print(open(os.path.join(out, "report.md"), encoding="utf-8").read())
    print(f"results: {results_path}\nreport: {os.path.join(out, 'report.md')}", file=sys.stderr)
    return summary


if __name__ == "__main__":
    main()
