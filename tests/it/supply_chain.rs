//! Supply-chain properties of the tree that hold without a network or cargo-deny: where every
//! locked crate comes from, that DuckDB is pinned, and that duckgate's own code forbids `unsafe`.
//! (`cargo deny check`, stage `deny` of `.ci/run`, checks advisories, bans and licences.)

use std::path::PathBuf;

const CRATES_IO: &str = "registry+https://github.com/rust-lang/crates.io-index";

fn read_repo_file(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// `(name, version, source)` of every `[[package]]` of a Cargo.lock text.
fn locked_packages(lock: &str) -> Vec<(String, String, Option<String>)> {
    let mut packages = Vec::new();
    for block in lock.split("[[package]]").skip(1) {
        let field = |key: &str| {
            block.lines().find_map(|line| {
                let value = line
                    .strip_prefix(key)?
                    .trim_start()
                    .strip_prefix('=')?
                    .trim();
                Some(value.trim_matches('"').to_string())
            })
        };
        let name = field("name").expect("every locked package has a name");
        let version = field("version").expect("every locked package has a version");
        packages.push((name, version, field("source")));
    }
    packages
}

/// Locked packages whose source is anything but crates.io (git, another registry).
fn foreign_sources(lock: &str) -> Vec<String> {
    locked_packages(lock)
        .into_iter()
        .filter_map(|(name, version, source)| match source {
            Some(source) if source != CRATES_IO => Some(format!("{name} {version} from {source}")),
            // No source: a path package of this workspace (duckgate itself).
            _ => None,
        })
        .collect()
}

#[test]
fn every_locked_crate_comes_from_crates_io() {
    let lock = read_repo_file("Cargo.lock");
    let packages = locked_packages(&lock);
    assert!(
        packages.len() > 50,
        "Cargo.lock lists only {} packages: parsing went wrong",
        packages.len()
    );
    let foreign = foreign_sources(&lock);
    assert!(
        foreign.is_empty(),
        "crates from outside crates.io:\n{}",
        foreign.join("\n")
    );
    let unsourced: Vec<_> = packages
        .iter()
        .filter(|(_, _, source)| source.is_none())
        .collect();
    assert_eq!(
        unsourced
            .iter()
            .map(|(name, _, _)| name.as_str())
            .collect::<Vec<_>>(),
        [
            "duckdb-oracle",
            "duckgate",
            "duckgate-plan-facts",
            "duckgate-plan-reader",
            "duckgate-test-harness",
            "duckgate-test-kit",
            "duckgate-validate",
            "libduckdb-sys",
            "zygote-fork"
        ],
        "only duckgate itself, its validator (crates/duckgate-validate), its fork helper \
         (crates/zygote-fork), its plan reader and plan facts (crates/plan-reader, \
         crates/plan-facts), its test harness's mark \
         (tests/harness), its test kit (tests/kit) and test-only oracle \
         (devtools/duckdb-oracle) and the vendored DuckDB bindings (vendor/libduckdb-sys) may be \
         path packages"
    );
}

#[test]
fn foreign_source_check_catches_git_and_other_registries() {
    let lock = format!(
        "[[package]]\nname = \"a\"\nversion = \"1.0.0\"\nsource = \"{CRATES_IO}\"\n\n\
         [[package]]\nname = \"b\"\nversion = \"0.1.0\"\nsource = \"git+https://example.invalid/b#abc\"\n\n\
         [[package]]\nname = \"c\"\nversion = \"2.0.0\"\nsource = \"sparse+https://other.invalid/index/\"\n"
    );
    let foreign = foreign_sources(&lock);
    assert_eq!(foreign.len(), 2, "{foreign:?}");
    assert!(foreign[0].starts_with("b 0.1.0 from git+"), "{foreign:?}");
    assert!(
        foreign[1].starts_with("c 2.0.0 from sparse+"),
        "{foreign:?}"
    );
}

/// The DuckDB bindings are the crates.io release duckgate pins, vendored to build DuckDB's full
/// source tree (ICU included), and that tree is pinned by its SHA-256.
#[test]
fn libduckdb_sys_is_the_vendored_crates_io_release_with_a_hash_pinned_source() {
    let lock = read_repo_file("Cargo.lock");
    let sys: Vec<_> = locked_packages(&lock)
        .into_iter()
        .filter(|(name, _, _)| name == "libduckdb-sys")
        .collect();
    assert_eq!(sys.len(), 1, "exactly one libduckdb-sys: {sys:?}");
    assert_eq!(
        sys[0].1, "1.20000.1",
        "the release the vendored copy was taken from"
    );
    assert!(
        sys[0].2.is_none(),
        "libduckdb-sys must be the vendored path package"
    );
    let manifest = read_repo_file("Cargo.toml");
    assert!(
        manifest_table_has(
            &manifest,
            "patch.crates-io",
            "libduckdb-sys = { path = \"vendor/libduckdb-sys\" }"
        ),
        "Cargo.toml must patch libduckdb-sys with vendor/libduckdb-sys"
    );
    let vendored = read_repo_file("vendor/libduckdb-sys/Cargo.toml");
    assert!(
        vendored.contains("name = \"libduckdb-sys\"")
            && vendored.contains("version = \"1.20000.1\""),
        "vendor/libduckdb-sys is not libduckdb-sys 1.20000.1"
    );
    let sources = read_repo_file("vendor/libduckdb-sys/src/sdist_sources.rs");
    let pin = sources
        .lines()
        .find_map(|l| l.trim().strip_prefix("const SDIST_SHA256: &str = \""))
        .and_then(|rest| rest.strip_suffix("\";"))
        .expect("sdist_sources.rs pins SDIST_SHA256");
    assert!(
        pin.len() == 64 && pin.bytes().all(|b| b.is_ascii_hexdigit()),
        "SDIST_SHA256 is not a SHA-256: {pin}"
    );
    assert!(
        sources.contains("--require-hashes") && sources.contains("if digest != SDIST_SHA256"),
        "the sdist must be hash-checked by pip and again by the build script"
    );
}

/// DuckDB is a large C++ code base that parses attacker-written SQL: it is pinned to one exact
/// version, and built from source with only the features the design allows.
#[test]
fn duckdb_is_pinned_exactly_and_bundled_with_json_and_icu_only() {
    let manifest = read_repo_file("Cargo.toml");
    let line = manifest
        .lines()
        .find(|line| {
            line.trim_start().starts_with("duckdb ") || line.trim_start().starts_with("duckdb=")
        })
        .expect("Cargo.toml depends on duckdb");
    assert!(
        line.contains("version = \"="),
        "duckdb must be pinned with `=`: {line}"
    );
    assert!(
        line.contains("features = [\"bundled\", \"json\", \"icu\"]"),
        "duckdb features must be exactly bundled, json and icu: {line}"
    );
    let lock = read_repo_file("Cargo.lock");
    let duckdb_versions: Vec<_> = locked_packages(&lock)
        .into_iter()
        .filter(|(name, _, _)| name == "duckdb")
        .collect();
    assert_eq!(
        duckdb_versions.len(),
        1,
        "exactly one duckdb in Cargo.lock: {duckdb_versions:?}"
    );
    // The differential test's oracle links the same DuckDB build: same pin, same features.
    let oracle = read_repo_file("devtools/duckdb-oracle/Cargo.toml");
    let oracle_line = oracle
        .lines()
        .find(|l| l.trim_start().starts_with("duckdb "))
        .expect("the oracle depends on duckdb");
    // `version = "…"` and `features = […]` of an inline dependency table.
    let part = |l: &str, key: &str| -> Option<String> {
        let (open, close) = if key == "features" {
            ("features = [", ']')
        } else {
            ("version = \"", '"')
        };
        let start = l.find(open)?;
        let end = l[start + open.len()..].find(close)? + start + open.len();
        Some(l[start..=end].to_string())
    };
    for key in ["version", "features"] {
        let expected = part(line, key).unwrap_or_else(|| panic!("no {key} in {line}"));
        assert_eq!(
            part(oracle_line, key),
            Some(expected),
            "devtools/duckdb-oracle must depend on duckdb with duckgate's {key}: {oracle_line}"
        );
    }
}

/// Whether Cargo.toml's `[table]` has the line `key = value` (spaces ignored).
fn manifest_table_has(manifest: &str, table: &str, line: &str) -> bool {
    let wanted = line.replace(' ', "");
    manifest
        .split(&format!("\n[{table}]\n"))
        .nth(1)
        .map(|rest| rest.split("\n[").next().unwrap_or(rest))
        .is_some_and(|body| body.lines().any(|l| l.replace(' ', "") == wanted))
}

/// The package's lint table keeps stdout for the protocol (`print_stdout` denied), and the
/// C-API oracle of the differential test, a crate holding `unsafe`, is only a dev-dependency,
/// so it never reaches the shipped binary. (That `unsafe` is forbidden in the package, and
/// which crates hold it, is SECURITY.md's claim, checked by `tests/it/security_md.rs`.)
#[test]
fn stdout_is_the_protocols_and_the_c_api_oracle_is_test_only() {
    let manifest = read_repo_file("Cargo.toml");
    assert!(
        manifest_table_has(&manifest, "lints.clippy", r#"print_stdout = "deny""#),
        "Cargo.toml [lints.clippy] must deny print_stdout (stdout carries MCP and worker frames)"
    );
    let oracle_is_dev_only = manifest
        .lines()
        .filter(|l| l.trim_start().starts_with("duckdb-oracle"))
        .all(|l| manifest_table_has(&manifest, "dev-dependencies", l));
    assert!(
        manifest.contains("duckdb-oracle") && oracle_is_dev_only,
        "duckdb-oracle (unsafe C-API calls) may only be a dev-dependency"
    );
}
