//! The house's floors: the parent's rooms never reach into the worker's, nor the worker's into
//! the parent's.
//!
//! A worker is the only process that opens DuckDB; the parent (the MCP server, the gateway, the
//! pool and the zygote's handle, the audit log) only spawns, feeds and reads it. What both sides
//! share lives in `src/protocol/` (the messages, the worker's command line, the database's
//! derived names, the value encoding). So no parent-side file may import the worker's `engine`,
//! its plan policy (`plan_policy`), its request loop (`sandbox::worker`) or the zygote's template
//! (`sandbox::zygote::template`), and no worker-side file (the engine, the plan policy, the
//! charts, the request loop, the confinement, the template) may import the MCP server, the gateway, the audit log, the pool or the zygote's
//! handle: a helper both need belongs in `protocol`. Read from the code itself (its identifiers
//! outside comments and strings), so a grouped `use`, a `super::` path or a path written inline
//! is seen as well as a plain `use`.

use std::path::{Path, PathBuf};

use crate::security_md::{code_words, crate_docs, rust_files};

/// The parent's rooms, as folders or files under the repository's root.
const PARENT_SIDE: [&str; 6] = [
    "src/mcp",
    "src/gateway",
    "src/gateway.rs",
    "src/sandbox/pool",
    "src/sandbox/zygote/handle.rs",
    "src/audit",
];

/// The worker's own modules, each as the two path segments that reach it.
const WORKER_SIDE_STEPS: [(&str, &str); 4] = [
    ("sandbox", "worker"),
    ("zygote", "template"),
    ("super", "template"),
    ("crate", "plan_policy"),
];

/// The worker's rooms, as folders or files under the repository's root.
const WORKER_SIDE: [&str; 6] = [
    "src/engine",
    "src/plan_policy",
    "src/plot",
    "src/sandbox/worker.rs",
    "src/sandbox/confine",
    "src/sandbox/zygote/template.rs",
];

/// The parent's own modules whose names are the crate's alone: the word under any path.
const PARENT_SIDE_MODULES: [&str; 3] = ["mcp", "gateway", "audit"];

/// The parent's modules with common names (`pool`, `handle`), each as the two path segments that
/// reach it.
const PARENT_SIDE_STEPS: [(&str, &str); 4] = [
    ("sandbox", "pool"),
    ("super", "pool"),
    ("zygote", "handle"),
    ("super", "handle"),
];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Each code word of `source` with the word before it when the two are segments of one path
/// (`crate::engine`, `sandbox::{worker`), else alone.
fn path_steps(source: &str) -> Vec<(Option<&str>, &str)> {
    let words = code_words(source);
    let offset = |word: &str| word.as_ptr() as usize - source.as_ptr() as usize;
    let mut steps = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let previous = i.checked_sub(1).and_then(|j| words.get(j));
        // The text between the previous word and this one, without whitespace: `::` (or `::{`)
        // when this word is the next segment of a path.
        let step = previous.filter(|previous| {
            let between = &source[offset(previous) + previous.len()..offset(word)];
            let joined: String = between.split_whitespace().collect();
            joined == "::" || joined == "::{"
        });
        steps.push((step.copied(), *word));
    }
    steps
}

/// What of the worker's `source` reaches: each finding names the path written.
fn reaches_into_the_worker(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (step, word) in path_steps(source) {
        // `engine` is the worker's module under every path (`crate::`, `super::`, a grouped
        // `use`); the one other `engine` a parent file may name is base64's.
        if word == "engine" && step != Some("base64") {
            found.push(match step {
                Some(previous) => format!("{previous}::engine"),
                None => "engine".to_string(),
            });
        }
        if let Some(previous) = step
            && WORKER_SIDE_STEPS.contains(&(previous, word))
        {
            found.push(format!("{previous}::{word}"));
        }
    }
    found
}

/// What of the parent's `source` reaches: each finding names the path written.
fn reaches_into_the_parent(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (step, word) in path_steps(source) {
        let named = PARENT_SIDE_MODULES.contains(&word)
            || step.is_some_and(|previous| PARENT_SIDE_STEPS.contains(&(previous, word)));
        if named {
            found.push(match step {
                Some(previous) => format!("{previous}::{word}"),
                None => word.to_string(),
            });
        }
    }
    found
}

fn files_of(root: &Path, places: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for place in places {
        let path = root.join(place);
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else {
            assert!(path.is_file(), "{place} is neither a folder nor a file");
            files.push(path);
        }
    }
    files
}

/// No file of `places` (one side of the house) reaches into the other side, as `reaches` reads
/// it; `side` and `other` name the two in the failure.
fn assert_never_reaches(
    places: &[&str],
    reaches: fn(&str) -> Vec<String>,
    side: &str,
    other: &str,
) {
    let root = repo_root();
    let files = files_of(&root, places);
    assert!(
        files.len() > 30,
        "found only {} {side}-side files: the listing is wrong",
        files.len()
    );
    let mut problems = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        for path in reaches(&source) {
            let name = file.strip_prefix(&root).unwrap_or(file).display();
            problems.push(format!("{name}: {path}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{side}-side code reaches into the {other} (move what both need into src/protocol/):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_parent_side_never_imports_the_worker_side() {
    assert_never_reaches(&PARENT_SIDE, reaches_into_the_worker, "parent", "worker");
}

#[test]
fn the_worker_side_never_imports_the_parent_side() {
    assert_never_reaches(&WORKER_SIDE, reaches_into_the_parent, "worker", "parent");
}

/// The scan above must be able to fail: every way of writing the path is seen, and the word in a
/// comment, a string or base64's `engine` is not.
#[test]
fn the_layering_scan_sees_every_path_to_the_worker_and_nothing_else() {
    let seen = [
        ("use crate::engine::wal_path;", "crate::engine"),
        ("let n = crate::engine::json_size(&x);", "crate::engine"),
        (
            "use crate::{engine::Engine, protocol::Request};",
            "crate::engine",
        ),
        ("use super::super::engine;", "super::engine"),
        ("use duckgate::engine :: Engine;", "duckgate::engine"),
        ("use crate::sandbox::worker::WorkerArgs;", "sandbox::worker"),
        ("use crate::sandbox::{worker::run};", "sandbox::worker"),
        ("use crate::sandbox::zygote::template;", "zygote::template"),
        ("use super::template::run;", "super::template"),
        ("use crate::plan_policy::PlanRules;", "crate::plan_policy"),
    ];
    for (source, path) in seen {
        assert_eq!(
            reaches_into_the_worker(source),
            [path],
            "not seen in {source:?}"
        );
    }
    let unseen = [
        "// crate::engine::wal_path is the worker's",
        "/// See [`crate::engine::Engine`].",
        "let s = \"crate::engine::x\";",
        "base64::engine::general_purpose::STANDARD.encode(&png)",
        "use super::worker_process::ReadyWorker;",
        "let worker = sandbox_worker; let template = zygote;",
    ];
    for source in unseen {
        assert!(
            reaches_into_the_worker(source).is_empty(),
            "wrongly seen in {source:?}: {:?}",
            reaches_into_the_worker(source)
        );
    }
}

/// The scan of the worker's side must be able to fail too: the parent's modules under every path
/// are seen, and a common word (`pool`, `handle`) only as a path to the parent's module.
#[test]
fn the_layering_scan_sees_every_path_to_the_parent_and_nothing_else() {
    let seen = [
        ("use crate::mcp::ServeOptions;", "crate::mcp"),
        ("let g = crate::gateway::Gateway::new(x);", "crate::gateway"),
        ("use crate::{protocol::Request, audit::Auditor};", "audit"),
        ("use duckgate::gateway :: Gateway;", "duckgate::gateway"),
        ("use crate::sandbox::pool::Pool;", "sandbox::pool"),
        ("use crate::sandbox::{pool::Pool};", "sandbox::pool"),
        ("use super::pool;", "super::pool"),
        (
            "use crate::sandbox::zygote::handle::Zygote;",
            "zygote::handle",
        ),
        ("use super::handle::Zygote;", "super::handle"),
    ];
    for (source, path) in seen {
        assert_eq!(
            reaches_into_the_parent(source),
            [path],
            "not seen in {source:?}"
        );
    }
    let unseen = [
        "// crate::mcp::render shapes the reply",
        "/// See [`crate::gateway::Gateway`].",
        "let s = \"crate::audit::x\";",
        "let pool = Vec::new(); let handle = thread::spawn(f);",
        "handle.join(); pool.push(1);",
        "use crate::protocol::{Request, WorkerArgs};",
    ];
    for source in unseen {
        assert!(
            reaches_into_the_parent(source).is_empty(),
            "wrongly seen in {source:?}: {:?}",
            reaches_into_the_parent(source)
        );
    }
}

/// Every module `src/lib.rs` declares has its place on the map the crate docs draw: named as a
/// link (`[`name`]`), in backticks, or by its path (`src/name.rs`, `src/name/…`). A new module
/// cannot be added without saying where it stands.
#[test]
fn every_module_of_the_library_is_on_the_map_its_docs_draw() {
    let source = std::fs::read_to_string(repo_root().join("src/lib.rs")).expect("src/lib.rs");
    let docs = crate_docs("src/lib.rs");
    let modules: Vec<&str> = source
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let declared = line
                .strip_prefix("pub mod ")
                .or(line.strip_prefix("mod "))?;
            declared.strip_suffix(';')
        })
        .collect();
    assert!(
        modules.len() > 15 && modules.contains(&"engine"),
        "read {modules:?} from src/lib.rs: the reading is wrong"
    );
    let unplaced: Vec<&str> = modules
        .into_iter()
        .filter(|module| {
            let forms = [
                format!("`{module}`"),
                format!("`src/{module}.rs`"),
                format!("`src/{module}/"),
            ];
            !forms.iter().any(|form| docs.contains(form.as_str()))
        })
        .collect();
    assert!(
        unplaced.is_empty(),
        "src/lib.rs declares modules its docs do not place on the floors: {unplaced:?}"
    );
}

/// The worker's production code (`src/engine/`, `src/sandbox/worker.rs`) without its tests: each
/// file up to its `#[cfg(test)]` module, and no test file.
fn worker_production_sources(root: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(&root.join("src/engine"), &mut files);
    files.push(root.join("src/sandbox/worker.rs"));
    files
        .into_iter()
        .filter(|file| file.file_name().is_some_and(|name| name != "tests.rs"))
        .filter(|file| !file.components().any(|part| part.as_os_str() == "tests"))
        .map(|file| {
            let source = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
            let production = match source.find("#[cfg(test)]") {
                Some(at) => source[..at].to_owned(),
                None => source,
            };
            let name = file
                .strip_prefix(root)
                .unwrap_or(&file)
                .display()
                .to_string();
            (name, production)
        })
        .collect()
}

/// Each call of a method of `names` in `source` (`.name(` in code, outside comments and strings).
fn method_calls<'s>(source: &'s str, names: &[&str]) -> Vec<&'s str> {
    let offset = |word: &str| word.as_ptr() as usize - source.as_ptr() as usize;
    code_words(source)
        .into_iter()
        .filter(|word| names.contains(word))
        .filter(|word| {
            let at = offset(word);
            source[..at].trim_end().ends_with('.')
                && source[at + word.len()..].trim_start().starts_with('(')
        })
        .collect()
}

/// DuckDB's methods that prepare SQL text. (`Connection::query_row` and `Connection::execute`
/// prepare inside too; the worker calls those methods only on statements `own_sql` prepared,
/// which a scan of words cannot tell from a connection's, so that part is kept by review.)
const PREPARING_METHODS: [&str; 2] = ["prepare", "prepare_cached"];

#[test]
fn the_worker_hands_duckdb_sql_to_prepare_in_one_place() {
    let root = repo_root();
    let sources = worker_production_sources(&root);
    assert!(
        sources.len() > 20
            && sources
                .iter()
                .any(|(name, _)| name == "src/engine/own_sql.rs"),
        "found only {} worker files: the listing is wrong",
        sources.len()
    );
    let mut calls = Vec::new();
    for (name, source) in &sources {
        for call in method_calls(source, &PREPARING_METHODS) {
            calls.push(format!("{name}: .{call}("));
        }
    }
    assert_eq!(
        calls,
        [
            "src/engine/statement.rs: .prepare_cached(",
            "src/engine/statement.rs: .prepare(",
        ],
        "the worker prepares SQL outside statement::prepare_sql"
    );
}

/// The scan above must be able to fail: a call is seen however it is spaced, and the word in a
/// comment, a string or another method's name is not.
#[test]
fn the_prepare_scan_sees_calls_and_nothing_else() {
    for source in [
        "let s = conn.prepare(sql)?;",
        "conn\n    .prepare_cached(\"SELECT 1\")",
        "self.conn . prepare ( &sql )",
    ] {
        assert_eq!(
            method_calls(source, &PREPARING_METHODS).len(),
            1,
            "not seen in {source:?}"
        );
    }
    for source in [
        "// conn.prepare(sql)",
        "let s = \"conn.prepare(x)\";",
        "self.prepare_checked(query)",
        "fn prepare(&self) {}",
        "prepare_sql(conn, sql, Cache::Fresh)",
    ] {
        assert!(
            method_calls(source, &PREPARING_METHODS).is_empty(),
            "wrongly seen in {source:?}"
        );
    }
}
