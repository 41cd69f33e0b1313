//! SECURITY.md must stay true to the code: every test it cites as proof must exist.
//!
//! A citation is a backticked span in SECURITY.md that names a file of this repository, either
//! alone (`` `deny.toml` ``) or followed by the test that proves a claim
//! (`` `tests/it/sandbox_denial.rs::worker_cannot_read_secret_file` ``; module segments may sit in
//! between, e.g. `` `crates/duckgate-validate/src/validate/mod.rs::tests::refuses_insert` ``). Each
//! cited file must exist,
//! each cited test must be defined in it (`fn name`), and each cited module must be declared in
//! it (`mod name`). A renamed or deleted test therefore fails CI until SECURITY.md is updated.
//!
//! SECURITY.md's claim about `unsafe` is checked against the tree itself: the lint table it names
//! forbids `unsafe_code`, and the crates it lists are exactly the ones whose Rust code uses
//! `unsafe`.

use std::path::{Path, PathBuf};

/// One backticked span of SECURITY.md that names something in the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Citation {
    /// The line of SECURITY.md it is on (1-based).
    line: usize,
    /// The repository-relative file path.
    file: String,
    /// Modules between the file and the item (`tests` in `x.rs::tests::t`).
    modules: Vec<String>,
    /// The test (function) name, if one is cited.
    test: Option<String>,
}

/// The first path segments that mark a backticked span as a repository path.
const REPO_DIRS: [&str; 11] = [
    "docs/",
    "src/",
    "crates/",
    "tests/",
    "fuzz/",
    "benches/",
    "devtools/",
    "vendor/",
    ".ci/",
    ".clusterfuzzlite/",
    ".github/",
];
/// Top-level files SECURITY.md may cite by bare name.
const REPO_FILES: [&str; 5] = [
    "Cargo.toml",
    "Cargo.lock",
    "deny.toml",
    "README.md",
    "SECURITY.md",
];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Backticked spans of one line (single backticks; fenced code blocks are skipped by the caller).
fn backticked_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Parse one backticked span; `None` when it does not name a repository file.
fn parse_citation(span: &str, line: usize) -> Option<Result<Citation, String>> {
    let mut parts = span.split("::");
    let file = parts.next()?.trim_end_matches('/');
    let names_repo_path =
        REPO_DIRS.iter().any(|dir| span.starts_with(dir)) || REPO_FILES.contains(&file);
    if !names_repo_path {
        return None;
    }
    let rest: Vec<&str> = parts.collect();
    if file.contains(char::is_whitespace) || file.contains('*') || file.contains("..") {
        return Some(Err(format!(
            "line {line}: `{span}` is not a plain repository path"
        )));
    }
    if let Some(bad) = rest.iter().find(|segment| !is_identifier(segment)) {
        return Some(Err(format!(
            "line {line}: `{span}`: `{bad}` is not a Rust identifier"
        )));
    }
    if !rest.is_empty() && !file.ends_with(".rs") {
        return Some(Err(format!(
            "line {line}: `{span}` cites a test in a file that is not Rust"
        )));
    }
    let (modules, test) = match rest.split_last() {
        Some((test, modules)) => (
            modules.iter().map(|m| m.to_string()).collect(),
            Some(test.to_string()),
        ),
        None => (Vec::new(), None),
    };
    Some(Ok(Citation {
        line,
        file: file.to_string(),
        modules,
        test,
    }))
}

/// The backticked spans of a Markdown text outside fenced code blocks, with their 1-based line.
fn prose_spans(markdown: &str) -> Vec<(usize, &str)> {
    let mut spans = Vec::new();
    let mut in_fence = false;
    for (index, line) in markdown.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            spans.extend(
                backticked_spans(line)
                    .into_iter()
                    .map(|span| (index + 1, span)),
            );
        }
    }
    spans
}

/// Every citation of a SECURITY.md text, or the spans that look like citations but are malformed.
fn citations(markdown: &str) -> (Vec<Citation>, Vec<String>) {
    let mut found = Vec::new();
    let mut malformed = Vec::new();
    for (line, span) in prose_spans(markdown) {
        match parse_citation(span, line) {
            Some(Ok(citation)) => found.push(citation),
            Some(Err(problem)) => malformed.push(problem),
            None => {}
        }
    }
    (found, malformed)
}

/// Whether `source` declares `keyword name` as a whole word (e.g. `fn worker_cannot_exec`).
fn declares(source: &str, keyword: &str, name: &str) -> bool {
    let needle = format!("{keyword} {name}");
    source.match_indices(&needle).any(|(at, _)| {
        let before_ok = source[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c == '_' || c.is_ascii_alphanumeric()));
        let after_ok = source[at + needle.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c == '_' || c.is_ascii_alphanumeric()));
        before_ok && after_ok
    })
}

/// The problems with `citations` against the files under `root`; empty when all hold.
fn stale_citations(root: &Path, citations: &[Citation]) -> Vec<String> {
    let mut problems = Vec::new();
    for citation in citations {
        let path = root.join(&citation.file);
        if !path.exists() {
            problems.push(format!(
                "line {}: `{}` does not exist",
                citation.line, citation.file
            ));
            continue;
        }
        if citation.modules.is_empty() && citation.test.is_none() {
            continue;
        }
        let source = match std::fs::read_to_string(&path) {
            Ok(source) => source,
            Err(error) => {
                problems.push(format!(
                    "line {}: cannot read `{}`: {error}",
                    citation.line, citation.file
                ));
                continue;
            }
        };
        for module in &citation.modules {
            if !declares(&source, "mod", module) {
                problems.push(format!(
                    "line {}: `{}` declares no `mod {module}`",
                    citation.line, citation.file
                ));
            }
        }
        if let Some(test) = &citation.test
            && !declares(&source, "fn", test)
        {
            problems.push(format!(
                "line {}: `{}` defines no `fn {test}`",
                citation.line, citation.file
            ));
        }
    }
    problems
}

fn security_md() -> String {
    let path = repo_root().join("SECURITY.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

#[test]
fn every_file_and_test_security_md_cites_exists() {
    let (found, malformed) = citations(&security_md());
    assert!(
        malformed.is_empty(),
        "malformed citations in SECURITY.md:\n{}",
        malformed.join("\n")
    );
    let problems = stale_citations(&repo_root(), &found);
    assert!(
        problems.is_empty(),
        "SECURITY.md cites what is not there:\n{}",
        problems.join("\n")
    );
}

/// Each trust boundary of the threat model (a `### ` heading under `## Threat model`) must point
/// at at least one test: a boundary without a cited test would be a claim without proof.
#[test]
fn every_trust_boundary_cites_at_least_one_test() {
    let text = security_md();
    let model = text
        .split("\n## Threat model")
        .nth(1)
        .expect("SECURITY.md has a `## Threat model` section");
    let model = model.split("\n## ").next().unwrap_or(model);
    let mut boundaries = 0;
    for section in model.split("\n### ").skip(1) {
        boundaries += 1;
        let title = section.lines().next().unwrap_or_default();
        let (found, _) = citations(section);
        assert!(
            found.iter().any(|c| c.test.is_some()),
            "trust boundary `{title}` cites no test (file::test_name)"
        );
    }
    assert!(
        boundaries >= 5,
        "the threat model names {boundaries} trust boundaries, expected at least 5"
    );
}

/// The checker itself must be able to fail: a stale test name, a missing file and a missing module
/// are each reported, and a real citation is not.
#[test]
fn checker_reports_stale_and_missing_citations() {
    let markdown = "\
proof: `tests/it/security_md.rs::checker_reports_stale_and_missing_citations`
stale: `tests/it/security_md.rs::no_such_test_anywhere`
missing file: `tests/no_such_file.rs::anything`
missing module: `tests/it/security_md.rs::no_such_module::checker_reports_stale_and_missing_citations`
not a citation: `/etc/passwd`, `read_csv`, `schema://snapshot`
```
`tests/inside_a_fence.rs::ignored`
```
";
    let (found, malformed) = citations(markdown);
    assert!(malformed.is_empty(), "{malformed:?}");
    assert_eq!(found.len(), 4, "{found:?}");
    let problems = stale_citations(&repo_root(), &found);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    // (The names are matched without their keyword: this file must not declare them.)
    assert!(
        problems[0].contains("no_such_test_anywhere") && problems[0].starts_with("line 2:"),
        "{problems:?}"
    );
    assert!(
        problems[1].contains("tests/no_such_file.rs` does not exist"),
        "{problems:?}"
    );
    assert!(
        problems[2].contains("no_such_module") && problems[2].starts_with("line 4:"),
        "{problems:?}"
    );
}

#[test]
fn checker_rejects_malformed_citations() {
    let (_, malformed) = citations("`tests/a b.rs` `tests/x.rs::not-an-ident` `deny.toml::t`");
    assert_eq!(malformed.len(), 3, "{malformed:?}");
}

#[test]
fn whole_word_match_does_not_accept_a_prefix() {
    let source = "fn worker_cannot_read_secret_file_twice() {}\nmod tests_extra {}";
    assert!(!declares(source, "fn", "worker_cannot_read_secret_file"));
    assert!(!declares(source, "mod", "tests"));
    assert!(declares(
        source,
        "fn",
        "worker_cannot_read_secret_file_twice"
    ));
}

// --- where `unsafe` is forbidden, and where it lives ------------------------------------------

/// The supply-chain bullet of SECURITY.md that makes the `unsafe` claim: the top-level list item
/// holding this span, with its nested items.
const UNSAFE_CLAIM: &str = r#"`unsafe_code = "forbid"`"#;

/// The `UNSAFE_CLAIM` bullet of `markdown`: its own lines, and the text of each nested item.
fn unsafe_claim(markdown: &str) -> (String, Vec<String>) {
    let lines: Vec<&str> = markdown.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains(UNSAFE_CLAIM))
        .unwrap_or_else(|| panic!("SECURITY.md has no bullet with {UNSAFE_CLAIM}"));
    let start = (0..=at)
        .rev()
        .find(|&i| lines[i].starts_with("- "))
        .unwrap_or_else(|| panic!("{UNSAFE_CLAIM} is not in a top-level bullet of SECURITY.md"));
    let mut own = String::new();
    let mut nested: Vec<String> = Vec::new();
    for (offset, line) in lines[start..].iter().enumerate() {
        let ends_bullet = line.trim().is_empty() || !line.starts_with(' ');
        if offset > 0 && ends_bullet {
            break;
        }
        if let Some(item) = line.strip_prefix("  - ") {
            nested.push(item.to_string());
        } else if let Some(last) = nested.last_mut() {
            last.push(' ');
            last.push_str(line.trim());
        } else {
            own.push_str(line);
            own.push('\n');
        }
    }
    (own, nested)
}

/// The crate directories SECURITY.md says hold `unsafe`: the first backticked span of each nested
/// item of the claim, each a directory with a `Cargo.toml`.
fn crates_said_to_hold_unsafe(root: &Path, markdown: &str) -> Vec<String> {
    let (_, nested) = unsafe_claim(markdown);
    nested
        .iter()
        .map(|item| {
            let dir = backticked_spans(item)
                .first()
                .unwrap_or_else(|| panic!("SECURITY.md: `{item}` names no crate in backticks"))
                .trim_end_matches('/')
                .to_string();
            assert!(
                root.join(&dir).join("Cargo.toml").is_file(),
                "SECURITY.md says `{dir}` holds unsafe code, but it is not a crate directory"
            );
            dir
        })
        .collect()
}

/// The whole-word identifiers and keywords of Rust `source` outside comments and string and
/// character literals. A small lexer, enough for the repository's own code, not a Rust parser.
pub(crate) fn code_words(source: &str) -> Vec<&str> {
    let b = source.as_bytes();
    // Non-ASCII bytes count as word bytes, so a word never splits a UTF-8 character.
    let word_byte = |c: u8| c == b'_' || c.is_ascii_alphanumeric() || c >= 0x80;
    let mut words = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            i += rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
        } else if rest.starts_with(b"/*") {
            let mut depth = 0usize;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'"' {
            i = end_of_string(b, i + 1);
        } else if b[i] == b'\'' {
            i = end_of_char_or_lifetime_quote(b, i);
        } else if word_byte(b[i]) {
            let start = i;
            while i < b.len() && word_byte(b[i]) {
                i += 1;
            }
            let word = &source[start..i];
            let hashes = b[i..].iter().take_while(|&&c| c == b'#').count();
            match (word, b.get(i + hashes)) {
                // A raw string (`r"…"`, `br#"…"#`, `cr"…"`): skip to its closing quote and hashes.
                ("r" | "br" | "cr", Some(b'"')) => {
                    let close = [b"\"".as_slice(), &b"#".repeat(hashes)].concat();
                    let body = i + hashes + 1;
                    i = b[body..]
                        .windows(close.len())
                        .position(|w| w == close.as_slice())
                        .map_or(b.len(), |at| body + at + close.len());
                }
                // A raw identifier (`r#unsafe`) is a name, not the keyword.
                ("r", Some(&c)) if hashes == 1 && word_byte(c) => {
                    i += 1;
                    while i < b.len() && word_byte(b[i]) {
                        i += 1;
                    }
                }
                _ => words.push(word),
            }
        } else {
            i += 1;
        }
    }
    words
}

/// The index just past the string literal whose body starts at `i`.
fn end_of_string(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// At a `'`: the index just past a character literal, or just past the quote of a lifetime or
/// label (whose name is then read as a word).
fn end_of_char_or_lifetime_quote(b: &[u8], i: usize) -> usize {
    match b.get(i + 1) {
        Some(b'\\') => {
            let mut j = i + 3;
            while j < b.len() && b[j] != b'\'' {
                j += 1;
            }
            j + 1
        }
        Some(&lead) => {
            let width = match lead {
                0xF0.. => 4,
                0xE0.. => 3,
                0x80.. => 2,
                _ => 1,
            };
            if b.get(i + 1 + width) == Some(&b'\'') {
                i + 2 + width
            } else {
                i + 1
            }
        }
        None => b.len(),
    }
}

fn uses_unsafe(source: &str) -> bool {
    code_words(source).contains(&"unsafe")
}

/// Every `.rs` file under `dir`, skipping build output (`target`), installed packages
/// (`node_modules`) and hidden directories (`.git`, virtual environments).
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry
            .file_type()
            .unwrap_or_else(|e| panic!("cannot stat {}: {e}", path.display()));
        if kind.is_dir() {
            if !(name.starts_with('.') || name == "target" || name == "node_modules") {
                rust_files(&path, out);
            }
        } else if kind.is_file() && name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The directory of the package `file` belongs to (the nearest one with a `Cargo.toml`),
/// relative to `root`; `"."` for the duckgate package itself.
fn package_of(root: &Path, file: &Path) -> String {
    let dir = file
        .ancestors()
        .skip(1)
        .take_while(|dir| dir.starts_with(root))
        .find(|dir| dir.join("Cargo.toml").is_file())
        .unwrap_or(root);
    match dir.strip_prefix(root) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.to_string_lossy().into_owned(),
        _ => ".".to_string(),
    }
}

/// SECURITY.md names the lint that forbids `unsafe` in duckgate's package, and `Cargo.toml`'s
/// `[lints.rust]` table holds exactly that line (cargo applies it to every target).
#[test]
fn unsafe_code_is_forbidden_by_the_lint_table_security_md_names() {
    let (claim, _) = unsafe_claim(&security_md());
    for span in ["`Cargo.toml`", "`[lints.rust]`", UNSAFE_CLAIM] {
        assert!(
            claim.contains(span),
            "SECURITY.md's unsafe claim no longer names {span}:\n{claim}"
        );
    }
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).expect("Cargo.toml");
    let lints_rust: Vec<&str> = manifest
        .lines()
        .skip_while(|line| line.trim() != "[lints.rust]")
        .skip(1)
        .take_while(|line| !line.trim_start().starts_with('['))
        .map(str::trim)
        .collect();
    let line = UNSAFE_CLAIM.trim_matches('`');
    assert!(
        lints_rust.contains(&line),
        "Cargo.toml's [lints.rust] table has no `{line}`: {lints_rust:?}"
    );
}

/// Every Rust file of the repository (vendored crates, helper crates and fuzz targets included)
/// that uses `unsafe` belongs to a crate SECURITY.md lists as holding it, and every crate it
/// lists does: the list can neither miss a crate nor keep one that no longer needs `unsafe`.
#[test]
fn unsafe_appears_only_in_the_crates_security_md_names() {
    let root = repo_root();
    let said: Vec<String> = crates_said_to_hold_unsafe(&root, &security_md());
    assert!(
        !said.is_empty(),
        "SECURITY.md lists no crate holding unsafe"
    );
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(
        files.iter().any(|f| f.ends_with("src/lib.rs")),
        "the scan found no src/lib.rs under {}",
        root.display()
    );
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        if uses_unsafe(&source) {
            found.push((package_of(&root, file), file.clone()));
        }
    }
    let unlisted: Vec<String> = found
        .iter()
        .filter(|(package, _)| !said.contains(package))
        .map(|(package, file)| format!("{} (package `{package}`)", file.display()))
        .collect();
    assert!(
        unlisted.is_empty(),
        "`unsafe` where SECURITY.md does not say it lives:\n{}",
        unlisted.join("\n")
    );
    let without: Vec<&String> = said
        .iter()
        .filter(|dir| !found.iter().any(|(package, _)| package == *dir))
        .collect();
    assert!(
        without.is_empty(),
        "SECURITY.md says these crates hold unsafe, but none of their Rust code does: {without:?}"
    );
}

/// The scan behind the test above must be able to fail: it sees `unsafe` blocks, functions,
/// `impl`s and attributes, and not the word in comments, strings, characters or longer names.
#[test]
fn the_unsafe_scan_sees_code_not_comments_strings_or_longer_names() {
    for code in [
        "fn f() { unsafe { g() } }",
        "pub unsafe fn f() {}",
        "unsafe impl Send for X {}",
        "#[unsafe(no_mangle)] extern \"C\" fn f() {}",
        "let c = '\"'; let s = \"\\\"\"; unsafe { g() }",
        "fn f<'a>(x: &'a str) -> &'a str { unsafe { g(x) } }",
        "let s = r#\"a \" b\"#; unsafe { g() }",
        "/* /* nested */ still a comment */ unsafe { g() }",
    ] {
        assert!(uses_unsafe(code), "missed the `unsafe` in: {code}");
    }
    for text in [
        "// unsafe { g() }",
        "/* unsafe /* nested unsafe */ unsafe */ fn f() {}",
        "/// An unsafe-free doc comment\nfn f() {}",
        "let s = \"unsafe { g() }\";",
        "let s = \"quoted \\\" unsafe\";",
        "let s = r#\"raw \" unsafe\"#;",
        "let s = br\"unsafe\";",
        "let q = '\\''; let s = \"unsafe\";",
        "#![deny(unsafe_op_in_unsafe_fn)] const DUCKGATE_UNSAFE_TEST_BYPASS: u8 = 0;",
        "let r#unsafe = 1;",
    ] {
        assert!(!uses_unsafe(text), "saw `unsafe` code in: {text}");
    }
}

// ---- The numbers SECURITY.md states -------------------------------------------------------------

const MIB: usize = 1024 * 1024;

/// `n` with a comma between thousands, as SECURITY.md writes counts (`1,000,000`).
fn with_thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `bytes` as SECURITY.md writes a size: whole KB (KiB) or MiB. A size that is not a whole
/// number of either fails here, so a change to an odd value cannot pass by rounding.
fn size_words(bytes: usize, unit: &str) -> String {
    let per = match unit {
        "KB" | "KiB" => 1024,
        "MiB" => MIB,
        other => panic!("no such unit in SECURITY.md: {other}"),
    };
    assert_eq!(
        bytes % per,
        0,
        "{bytes} bytes is not a whole number of {unit}"
    );
    format!("{} {unit}", bytes / per)
}

/// The limits and floors SECURITY.md states as numbers, each rebuilt from the constant the code
/// enforces: a change to a limit fails here until the threat model says the new value.
fn stated_numbers() -> Vec<(&'static str, String)> {
    use duckgate::mcp::tools;
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).expect(".ci/run");
    let fuzz_seconds = ci
        .lines()
        .find_map(|l| l.strip_prefix("FUZZ_SECONDS_PER_TARGET="))
        .expect(".ci/run sets FUZZ_SECONDS_PER_TARGET");
    vec![
        (
            "the MCP layer's argument caps (src/mcp/tools/mod.rs, the validator's SQL cap)",
            format!(
                "names {} bytes, search text {}, resource URIs {}, SQL the validator's {}, arrays {} items",
                tools::MAX_NAME_BYTES,
                size_words(tools::MAX_SEARCH_BYTES, "KB"),
                size_words(tools::MAX_URI_BYTES, "KB"),
                size_words(
                    duckgate_validate::validate::Limits::default().max_sql_bytes,
                    "KB"
                ),
                tools::MAX_ARRAY_ITEMS,
            ),
        ),
        (
            "the chart caps (src/plot/mod.rs)",
            format!(
                "at most {} rows, {}×{} px and a {} PNG",
                with_thousands(duckgate::plot::MAX_ROWS),
                duckgate::plot::MAX_WIDTH,
                duckgate::plot::MAX_HEIGHT,
                size_words(duckgate::plot::MAX_PNG_BYTES, "MiB"),
            ),
        ),
        (
            "the audit log's string cap (src/audit/record.rs)",
            format!(
                "{} is kept as its first {}",
                size_words(duckgate::audit::MAX_RECORDED_TEXT_BYTES, "KB"),
                size_words(duckgate::audit::MAX_RECORDED_TEXT_BYTES, "KB"),
            ),
        ),
        (
            "the audit log's rotation default (src/audit/mod.rs)",
            format!(
                "`--audit-max-bytes` (default {})",
                size_words(duckgate::audit::DEFAULT_MAX_BYTES as usize, "MiB")
            ),
        ),
        (
            "the audit log's generations default (src/audit/mod.rs)",
            format!(
                "`--audit-generations` (G, default {})",
                duckgate::audit::DEFAULT_GENERATIONS
            ),
        ),
        (
            "the audit log's charge in time (src/audit/charge.rs)",
            format!(
                "past a burst of {} at {}/s",
                size_words(duckgate::audit::CHARGE_BURST_BYTES as usize, "KiB"),
                size_words(duckgate::audit::CHARGE_BYTES_PER_SECOND as usize, "KiB"),
            ),
        ),
        (
            "the audit log's bound per session (src/audit/charge.rs, src/audit/record.rs)",
            format!(
                "a session writes at most {} + {}/s × t + {}",
                size_words(duckgate::audit::CHARGE_BURST_BYTES as usize, "KiB"),
                size_words(duckgate::audit::CHARGE_BYTES_PER_SECOND as usize, "KiB"),
                size_words(duckgate::audit::MAX_RECORD_BYTES, "KiB"),
            ),
        ),
        (
            "the kernel floor (src/sandbox/confine/mod.rs)",
            format!(
                "Linux {} or later on x86_64 or aarch64, with landlock enabled (ABI {} or",
                duckgate::sandbox::confine::MINIMUM_LINUX,
                duckgate::sandbox::confine::MINIMUM_LANDLOCK_ABI,
            ),
        ),
        (
            "the kernel floor in the table of promises (src/sandbox/confine/mod.rs)",
            format!(
                "floor is landlock ABI {} (Linux {}) with seccomp filters",
                duckgate::sandbox::confine::MINIMUM_LANDLOCK_ABI,
                duckgate::sandbox::confine::MINIMUM_LINUX,
            ),
        ),
        (
            "the fuzzing time per target (.ci/run)",
            format!("{fuzz_seconds} s per target in every CI"),
        ),
    ]
}

/// `text` with every run of whitespace (line breaks and indentation included) as one space, so a
/// stated phrase may wrap anywhere in SECURITY.md.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_limits_security_md_states_are_the_ones_the_code_enforces() {
    let text = one_line(&security_md());
    let drifted: Vec<String> = stated_numbers()
        .into_iter()
        .filter(|(_, phrase)| !text.contains(phrase.as_str()))
        .map(|(what, phrase)| format!("{what}: SECURITY.md should say {phrase:?}"))
        .collect();
    assert!(
        drifted.is_empty(),
        "SECURITY.md states numbers the code no longer has:\n{}",
        drifted.join("\n")
    );
}

#[test]
fn the_number_check_notices_a_changed_limit() {
    // The phrases are built from the constants, so SECURITY.md with one number changed must
    // no longer contain the phrase: proven here on the chart caps.
    let (_, phrase) = stated_numbers()
        .into_iter()
        .find(|(what, _)| what.starts_with("the chart caps"))
        .expect("the chart caps are stated");
    let text = one_line(&security_md());
    assert!(text.contains(&phrase));
    let altered = text.replace(&phrase, &phrase.replace("2000", "2001"));
    assert!(!altered.contains(&phrase));
    assert_eq!(with_thousands(1_000_000), "1,000,000");
    assert_eq!(with_thousands(999), "999");
    assert_eq!(size_words(4096, "KB"), "4 KB");
}

/// The other documents whose citations are checked the same way: the design and the README.
const CHECKED_DOCS: [&str; 2] = ["docs/ARCHITECTURE.md", "README.md"];

/// The crate roots whose opening docs are the map a newcomer reads first: checked as the
/// documents are.
const CRATE_ROOTS: [&str; 5] = [
    "src/lib.rs",
    "crates/duckgate-validate/src/lib.rs",
    "crates/plan-facts/src/lib.rs",
    "crates/plan-reader/src/lib.rs",
    "crates/zygote-fork/src/lib.rs",
];

fn read_doc(name: &str) -> String {
    let path = repo_root().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The crate docs of a crate root (its `//!` lines), as the Markdown rustdoc reads.
pub(crate) fn crate_docs(root: &str) -> String {
    read_doc(root)
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("//!"))
        .map(|line| line.strip_prefix(' ').unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every checked text but SECURITY.md: the design, the README and the crate roots' docs, each
/// with its name.
fn design_texts() -> Vec<(&'static str, String)> {
    let documents = CHECKED_DOCS.into_iter().map(|doc| (doc, read_doc(doc)));
    let roots = CRATE_ROOTS.into_iter().map(|root| (root, crate_docs(root)));
    documents.chain(roots).collect()
}

/// ARCHITECTURE.md, the README and the crate roots' docs cite files, modules and tests of the
/// repository as SECURITY.md does; each must exist.
#[test]
fn every_file_and_test_the_design_and_the_readme_cite_exists() {
    for (doc, text) in design_texts() {
        let (found, malformed) = citations(&text);
        assert!(
            malformed.is_empty(),
            "malformed citations in {doc}:\n{}",
            malformed.join("\n")
        );
        assert!(
            !found.is_empty(),
            "{doc} cites nothing: the parser is wrong"
        );
        let problems = stale_citations(&repo_root(), &found);
        assert!(
            problems.is_empty(),
            "{doc} cites what is not there:\n{}",
            problems.join("\n")
        );
    }
}

/// A backticked constant's name (`MAX_FUZZY_MATCHES`): upper case, digits and underscores, with
/// at least one underscore so that words such as `SELECT` or `UTC` are not taken for one.
fn constant_names(markdown: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (_, span) in prose_spans(markdown) {
        let name = span.rsplit("::").next().unwrap_or(span);
        let shaped = name.contains('_')
            && name.starts_with(|c: char| c.is_ascii_uppercase())
            && name
                .chars()
                .all(|c| c == '_' || c.is_ascii_uppercase() || c.is_ascii_digit());
        if shaped && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// The Rust sources of the shipped code: the package's `src/` and the crates it builds on
/// (`crates/`), not a crate's integration tests; the test kit lives under `tests/`.
fn shipped_sources() -> Vec<String> {
    let crates = repo_root().join("crates");
    let mut files = Vec::new();
    rust_files(&crates, &mut files);
    files.retain(|file| {
        let mut parts = file.strip_prefix(&crates).expect("under crates/").iter();
        let folder = parts.nth(1);
        folder != Some("tests".as_ref())
    });
    rust_files(&repo_root().join("src"), &mut files);
    files
        .iter()
        .map(|file| std::fs::read_to_string(file).expect("read source"))
        .collect()
}

/// The kernel's names the documents use for what the code reaches through nix's typed API
/// (`AddressFamily::Unix`, `ControlMessageOwned::ScmRights`, `SockType::SeqPacket`), so the code
/// never spells them: each must still be named in the code's own comments.
/// (`PR_SET_NO_NEW_PRIVS` is spelled by the seccomp policy, which lets the template's children
/// set it, so the general rule covers it.)
const KERNEL_NAMES_BEHIND_TYPED_CALLS: [&str; 3] = ["AF_UNIX", "SCM_RIGHTS", "SOCK_SEQPACKET"];

/// SQL the documents write in capitals with an underscore, which the constant finder would
/// otherwise take for a constant.
const SQL_WORDS: [&str; 2] = ["READ_ONLY", "TRY_CAST"];

/// A constant the documents name is one the code declares (`IDLE_PROCESS_BYTES`,
/// `VALUE_ENCODING`) or uses by that name outside comments and strings (the kernel's
/// `RLIMIT_CPU`), or one of [`KERNEL_NAMES_BEHIND_TYPED_CALLS`], so a renamed or removed
/// constant cannot leave a document pointing at nothing. Environment variables the documents
/// name are read, not declared: left out.
#[test]
fn every_constant_the_documents_name_is_in_the_code() {
    let sources = shipped_sources();
    let declared_or_used = |name: &str| {
        sources.iter().any(|source| {
            declares(source, "const", name)
                || declares(source, "static", name)
                || code_words(source).contains(&name)
        })
    };
    for name in KERNEL_NAMES_BEHIND_TYPED_CALLS {
        assert!(
            !declared_or_used(name) && sources.iter().any(|source| source.contains(name)),
            "{name}: the code spells it now, or no longer names it: update the list"
        );
    }
    let texts = std::iter::once(("SECURITY.md", security_md())).chain(design_texts());
    for (doc, text) in texts {
        let missing: Vec<String> = constant_names(&text)
            .into_iter()
            .filter(|name| !name.starts_with("DUCKGATE_") && !name.starts_with("CARGO_"))
            .filter(|name| !KERNEL_NAMES_BEHIND_TYPED_CALLS.contains(&name.as_str()))
            .filter(|name| !SQL_WORDS.contains(&name.as_str()))
            .filter(|name| !declared_or_used(name))
            .collect();
        assert!(
            missing.is_empty(),
            "{doc} names constants the code neither declares nor uses: {missing:?}"
        );
    }
    assert!(
        constant_names("`MAX_FUZZY_MATCHES` and `SELECT` and `NO_SUCH_ONE`")
            == ["MAX_FUZZY_MATCHES", "NO_SUCH_ONE"],
        "the constant finder is wrong"
    );
    assert!(!declared_or_used("NO_SUCH_ONE") && declared_or_used("MAX_FUZZY_MATCHES"));
}

/// The README's count of everyday questions is the corpus's.
#[test]
fn the_readme_counts_the_everyday_corpus_right() {
    let readme = read_doc("README.md");
    let claim = readme
        .lines()
        .find(|line| line.contains("`tests/it/everyday/corpus.sql` holds"))
        .expect("the README states the corpus's size");
    let said: usize = claim
        .split("holds ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.replace(',', "").parse().ok())
        .expect("a number after `holds`");
    assert_eq!(said, crate::everyday::entries().len(), "{claim}");
}
