//! "Did you mean": catalog names close to a name the agent got wrong.

use crate::protocol::CatalogSnapshot;

/// Levenshtein distance (insertions, deletions, substitutions) by characters, with a swap of two
/// adjacent characters also counted as one edit (optimal string alignment), since `mian` for
/// `main` is the commonest typo of all.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the dynamic-programming table: two back (for swaps), one back, current.
    let mut before_previous: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for i in 0..a.len() {
        current[0] = i + 1;
        for j in 0..b.len() {
            let substitution = previous[j] + usize::from(a[i] != b[j]);
            let mut best = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
            if i > 0 && j > 0 && a[i] == b[j - 1] && a[i - 1] == b[j] {
                best = best.min(before_previous[j - 1] + 1);
            }
            current[j + 1] = best;
        }
        std::mem::swap(&mut before_previous, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// How many edits still count as "close" for a name of this length (short names get one).
fn budget(name: &str) -> usize {
    (name.chars().count() / 3).max(1)
}

/// Distance to the candidate's closest `_`-separated word, so that `readng` still finds
/// `cgm_readings`. Words shorter than 4 characters (and short wanted names) are too noisy to use.
fn word_distance(wanted: &str, candidate: &str) -> Option<usize> {
    if wanted.chars().count() < 4 {
        return None;
    }
    candidate
        .split('_')
        .filter(|word| word.chars().count() >= 4 && word.len() != candidate.len())
        .map(|word| edit_distance(wanted, word))
        .min()
}

/// Names from `candidates` close to `wanted`, closest first, at most `max`.
///
/// Case is ignored. Close means: a few edits away from the whole name or from one of its
/// `_`-separated words, or containing the wanted text (so `readings` finds `cgm_readings`).
pub fn closest<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Vec<String> {
    let wanted_lower = wanted.to_lowercase();
    if wanted_lower.is_empty() {
        return Vec::new();
    }
    let budget = budget(&wanted_lower);
    // (score, longest shared prefix reversed so longer sorts first, name)
    let mut scored: Vec<(usize, std::cmp::Reverse<usize>, String)> = Vec::new();
    for candidate in candidates {
        let candidate_lower = candidate.to_lowercase();
        let whole = edit_distance(&wanted_lower, &candidate_lower);
        let word = word_distance(&wanted_lower, &candidate_lower);
        let contains = candidate_lower.contains(&wanted_lower)
            || (candidate_lower.len() >= 3 && wanted_lower.contains(&candidate_lower));
        // Whole-name near misses rank first, then near misses of one word, then containment.
        let score = if whole <= budget {
            Some(whole)
        } else if let Some(word) = word.filter(|d| *d <= budget) {
            Some(budget + 1 + word)
        } else if contains {
            Some(2 * budget + 2)
        } else {
            None
        };
        if let Some(score) = score
            && !scored.iter().any(|(_, _, existing)| existing == candidate)
        {
            let shared_prefix = wanted_lower
                .chars()
                .zip(candidate_lower.chars())
                .take_while(|(a, b)| a == b)
                .count();
            scored.push((
                score,
                std::cmp::Reverse(shared_prefix),
                candidate.to_string(),
            ));
        }
    }
    scored.sort();
    scored
        .into_iter()
        .take(max)
        .map(|(_, _, name)| name)
        .collect()
}

/// What kind of name the agent got wrong, when the error says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Looking {
    /// A table or view (or we cannot tell): tables first, then columns.
    ForTable,
    /// A column: columns first, then tables.
    ForColumn,
}

/// Table names close to `wanted` (or to its last dotted part).
fn table_matches(wanted: &str, catalog: &CatalogSnapshot, max: usize) -> Vec<String> {
    let last_part = wanted.rsplit('.').next().unwrap_or(wanted);
    let names = || catalog.tables.iter().map(|t| t.name.as_str());
    let mut matches = closest(wanted, names(), max);
    if last_part != wanted {
        for table in closest(last_part, names(), max) {
            if !matches.contains(&table) {
                matches.push(table);
            }
        }
    }
    matches
}

/// `table.column` names whose column is close to the last dotted part of `wanted`.
fn column_matches(wanted: &str, catalog: &CatalogSnapshot) -> Vec<String> {
    let last_part = wanted.rsplit('.').next().unwrap_or(wanted);
    let mut column_names: Vec<(String, &str)> = Vec::new();
    for table in &catalog.tables {
        for column in &table.columns {
            column_names.push((
                format!("{}.{}", table.name, column.name),
                column.name.as_str(),
            ));
        }
    }
    let mut matches = Vec::new();
    for column in closest(last_part, column_names.iter().map(|(_, c)| *c), usize::MAX) {
        for (qualified, bare) in &column_names {
            if *bare == column && !matches.contains(qualified) {
                matches.push(qualified.clone());
            }
        }
    }
    matches
}

/// Table names and `table.column` names close to `wanted`, the kind looked for first.
///
/// `wanted` may itself be qualified (`schema.table`, `table.column`); only its last part is
/// compared with column names.
pub fn catalog_matches(
    wanted: &str,
    catalog: &CatalogSnapshot,
    looking: Looking,
    max: usize,
) -> Vec<String> {
    let wanted = wanted.trim_matches('"');
    let (first, second) = match looking {
        Looking::ForTable => (
            table_matches(wanted, catalog, max),
            column_matches(wanted, catalog),
        ),
        Looking::ForColumn => (
            column_matches(wanted, catalog),
            table_matches(wanted, catalog, max),
        ),
    };
    let mut matches = first;
    for name in second {
        if !matches.contains(&name) {
            matches.push(name);
        }
    }
    matches.truncate(max);
    matches
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ColumnInfo, TableInfo};

    #[test]
    fn edit_distance_counts_single_edits_and_swaps() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("cgm_reading", "cgm_readings"), 1);
        assert_eq!(edit_distance("events", "evnets"), 1);
        assert_eq!(edit_distance("events", "evtns"), 2);
        assert_eq!(edit_distance("glücose", "glucose"), 1);
        assert_eq!(edit_distance("mian", "main"), 1);
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("abc", "ca"), 3);
    }

    #[test]
    fn closest_orders_by_distance_and_drops_far_names() {
        let names = ["cgm_readings", "events", "raw_events", "basal_deliveries"];
        assert_eq!(closest("cgm_reading", names, 5), vec!["cgm_readings"]);
        assert_eq!(closest("evnts", names, 5), vec!["events", "raw_events"]);
        assert_eq!(closest("basal", names, 5), vec!["basal_deliveries"]);
        assert_eq!(closest("event", names, 5), vec!["events", "raw_events"]);
        assert_eq!(closest("READINGS", names, 5), vec!["cgm_readings"]);
        assert!(closest("zzzzzzzz", names, 5).is_empty());
        assert!(closest("", names, 5).is_empty());
        assert_eq!(closest("readng", names, 5), vec!["cgm_readings"]);
        // Equally close: the one that starts the same way first.
        assert_eq!(
            closest("glucos", ["avg_glucose", "glucose_mg_dl"], 5),
            vec!["glucose_mg_dl", "avg_glucose"]
        );
        assert!(closest("ts", ["id", "ts_utc"], 5) == vec!["ts_utc"]);
    }

    fn column(name: &str) -> ColumnInfo {
        ColumnInfo {
            name: name.into(),
            data_type: "INTEGER".into(),
            nullable: true,
            default: None,
            primary_key: false,
            unique: false,
            references: None,
            comment: None,
        }
    }

    #[test]
    fn catalog_matches_offer_the_kind_looked_for_first() {
        let catalog = CatalogSnapshot {
            tables: vec![TableInfo {
                schema: "main".into(),
                name: "cgm_readings".into(),
                kind: "table".into(),
                description: None,
                estimated_rows: None,
                columns: vec![column("glucose_mg_dl"), column("ts")],
                indexes: vec![],
            }],
            foreign_keys: vec![],
        };
        let table = Looking::ForTable;
        assert_eq!(
            catalog_matches("cgm_reading", &catalog, table, 5),
            vec!["cgm_readings"]
        );
        assert_eq!(
            catalog_matches("glucose_mgdl", &catalog, table, 5),
            vec!["cgm_readings.glucose_mg_dl"]
        );
        assert_eq!(
            catalog_matches("cgm_readings.glucose", &catalog, table, 5),
            vec!["cgm_readings", "cgm_readings.glucose_mg_dl"]
        );
        assert_eq!(
            catalog_matches("cgm_readings.glucose", &catalog, Looking::ForColumn, 5),
            vec!["cgm_readings.glucose_mg_dl", "cgm_readings"]
        );
    }
}
