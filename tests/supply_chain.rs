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
        ["duckgate"],
        "only duckgate itself may be a path package"
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

/// DuckDB is a large C++ code base that parses attacker-written SQL: it is pinned to one exact
/// version, and built from the bundled sources with only the features the design allows.
#[test]
fn duckdb_is_pinned_exactly_and_bundled_with_json_only() {
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
        line.contains("features = [\"bundled\", \"json\"]"),
        "duckdb features must be exactly bundled and json: {line}"
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
}

/// Memory safety of duckgate's own code is not negotiable: `unsafe` is forbidden crate-wide,
/// for the library and the binary alike.
#[test]
fn duckgate_forbids_unsafe_code() {
    let manifest = read_repo_file("Cargo.toml");
    let in_manifest = manifest
        .split("[lints.rust]")
        .nth(1)
        .map(|table| table.split("\n[").next().unwrap_or(table))
        .is_some_and(|table| {
            table
                .lines()
                .any(|l| l.replace(' ', "") == "unsafe_code=\"forbid\"")
        });
    let in_sources = ["src/lib.rs", "src/main.rs"]
        .iter()
        .all(|file| read_repo_file(file).contains("#![forbid(unsafe_code)]"));
    assert!(
        in_manifest || in_sources,
        "unsafe_code must be forbidden in Cargo.toml [lints.rust] or in every crate root"
    );
}
