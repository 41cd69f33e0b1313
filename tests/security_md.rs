//! SECURITY.md must stay true to the code: every test it cites as proof must exist.
//!
//! A citation is a backticked span in SECURITY.md that names a file of this repository, either
//! alone (`` `deny.toml` ``) or followed by the test that proves a claim
//! (`` `tests/sandbox_denial.rs::worker_cannot_read_secret_file` ``; module segments may sit in
//! between, e.g. `` `src/validate/mod.rs::tests::refuses_insert` ``). Each cited file must exist,
//! each cited test must be defined in it (`fn name`), and each cited module must be declared in
//! it (`mod name`). A renamed or deleted test therefore fails CI until SECURITY.md is updated.

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
const REPO_DIRS: [&str; 8] = [
    "src/",
    "tests/",
    "examples/",
    "fuzz/",
    "benches/",
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

/// Every citation of a SECURITY.md text, or the spans that look like citations but are malformed.
fn citations(markdown: &str) -> (Vec<Citation>, Vec<String>) {
    let mut found = Vec::new();
    let mut malformed = Vec::new();
    let mut in_fence = false;
    for (index, line) in markdown.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        for span in backticked_spans(line) {
            match parse_citation(span, index + 1) {
                Some(Ok(citation)) => found.push(citation),
                Some(Err(problem)) => malformed.push(problem),
                None => {}
            }
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
proof: `tests/security_md.rs::checker_reports_stale_and_missing_citations`
stale: `tests/security_md.rs::no_such_test_anywhere`
missing file: `tests/no_such_file.rs::anything`
missing module: `tests/security_md.rs::no_such_module::checker_reports_stale_and_missing_citations`
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
