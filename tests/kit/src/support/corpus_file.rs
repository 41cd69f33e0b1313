//! The format of the SQL files the answer-comparing suites read (tests/it/everyday/corpus.sql,
//! tests/it/conformance/queries.sql): entries of SQL with a few `-- key: value` headers.

use std::collections::BTreeMap;

/// One corpus entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its `-- name:`.
    pub name: String,
    /// Its `-- category:`.
    pub category: String,
    /// The statement orders its rows (a top-level ORDER BY): compare in order.
    pub ordered: bool,
    /// duckgate must refuse it (`-- expect: refused`).
    pub expect_refused: bool,
    /// The statement, without its final `;`.
    pub sql: String,
    /// The line of its `-- name:` in the file, for messages.
    pub line: usize,
}

/// Parse the corpus: `-- name:` starts an entry, the `-- key: value` lines right after it are
/// its headers, and the rest up to the next entry is its SQL (trailing comment lines and a final
/// `;` dropped). The same format tests/it/everyday/check_corpus.py reads.
pub fn parse_corpus(text: &str) -> Result<Vec<Entry>, String> {
    struct Building {
        headers: BTreeMap<String, String>,
        sql: Vec<String>,
        line: usize,
    }
    let mut building: Vec<Building> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let header = line.strip_prefix("-- ").and_then(|rest| {
            let (key, value) = rest.split_once(':')?;
            let key_is_word =
                !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            key_is_word.then(|| (key.to_string(), value.trim().to_string()))
        });
        match header {
            Some((key, value)) if key == "name" => building.push(Building {
                headers: BTreeMap::from([(key, value)]),
                sql: Vec::new(),
                line: index + 1,
            }),
            Some((key, value)) if building.last().is_some_and(|b| b.sql.is_empty()) => {
                if !["category", "ordered", "expect", "ask"].contains(&key.as_str()) {
                    return Err(format!("line {}: unknown header {key:?}", index + 1));
                }
                if let Some(current) = building.last_mut() {
                    current.headers.insert(key, value);
                }
            }
            _ => {
                if let Some(current) = building.last_mut()
                    && (!current.sql.is_empty() || !line.trim().is_empty())
                {
                    current.sql.push(line.to_string());
                }
            }
        }
    }
    let mut entries = Vec::new();
    for mut b in building {
        while b
            .sql
            .last()
            .is_some_and(|l| l.trim().is_empty() || l.trim_start().starts_with("--"))
        {
            b.sql.pop();
        }
        let joined = b.sql.join("\n");
        let sql = joined.trim().trim_end_matches(';').trim_end().to_string();
        let header = |key: &str| b.headers.get(key).cloned().unwrap_or_default();
        let entry = Entry {
            name: header("name"),
            category: header("category"),
            ordered: match header("ordered").as_str() {
                "yes" => true,
                "" | "no" => false,
                other => return Err(format!("line {}: ordered: {other:?}", b.line)),
            },
            expect_refused: match header("expect").as_str() {
                "refused" => true,
                "" => false,
                other => return Err(format!("line {}: expect: {other:?}", b.line)),
            },
            sql,
            line: b.line,
        };
        if entry.name.is_empty() || entry.category.is_empty() || entry.sql.is_empty() {
            return Err(format!(
                "line {}: an entry needs a name, a category and SQL",
                entry.line
            ));
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// Panic unless every entry has a unique snake_case name and is marked `ordered` exactly when
/// its statement has a top-level ORDER BY.
pub fn assert_well_formed(entries: &[Entry]) {
    let mut names = std::collections::HashSet::new();
    for e in entries {
        assert!(names.insert(&e.name), "duplicate entry name {}", e.name);
        assert!(
            e.name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "entry name {:?} (line {}) is not snake_case",
            e.name,
            e.line
        );
        assert_eq!(
            e.ordered,
            has_top_level_order_by(&e.sql),
            "{} (line {}): `ordered: yes` must go with a top-level ORDER BY, and only with one",
            e.name,
            e.line
        );
    }
}

/// Whether the statement's outermost query has an ORDER BY (not one inside parentheses, such as
/// a window's, an aggregate's or a subquery's), outside strings, quoted names and comments.
pub fn has_top_level_order_by(sql: &str) -> bool {
    let bytes = sql.as_bytes();
    let mut depth = 0i32;
    let mut i = 0;
    let mut previous_word = String::new();
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += 1;
                }
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'(' => depth += 1,
            b')' => depth -= 1,
            c if c.is_ascii_alphabetic() => {
                let start = i;
                while i + 1 < bytes.len()
                    && (bytes[i + 1].is_ascii_alphanumeric() || bytes[i + 1] == b'_')
                {
                    i += 1;
                }
                let word = sql[start..=i].to_ascii_uppercase();
                if depth == 0 && previous_word == "ORDER" && word == "BY" {
                    return true;
                }
                previous_word = word;
            }
            _ => {}
        }
        i += 1;
    }
    false
}
