//! "Did you mean": catalog names close to a name the agent got wrong.

use crate::protocol::CatalogSnapshot;

/// Edit distance (insertions, deletions, substitutions) between two strings, by characters.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b_chars: Vec<char> = b.chars().collect();
    // One row of the dynamic-programming table at a time.
    let mut previous: Vec<usize> = (0..=b_chars.len()).collect();
    let mut current = vec![0; b_chars.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b_chars.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b_chars.len()]
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
        .map(|word| levenshtein(wanted, word))
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
    let mut scored: Vec<(usize, String)> = Vec::new();
    for candidate in candidates {
        let candidate_lower = candidate.to_lowercase();
        let whole = levenshtein(&wanted_lower, &candidate_lower);
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
            && !scored.iter().any(|(_, existing)| existing == candidate)
        {
            scored.push((score, candidate.to_string()));
        }
    }
    scored.sort();
    scored.into_iter().take(max).map(|(_, name)| name).collect()
}

/// Table names and `table.column` names close to `wanted`, tables first when equally close.
///
/// `wanted` may itself be qualified (`schema.table`, `table.column`); only its last part is
/// compared with column names.
pub fn catalog_matches(wanted: &str, catalog: &CatalogSnapshot, max: usize) -> Vec<String> {
    let wanted = wanted.trim_matches('"');
    let last_part = wanted.rsplit('.').next().unwrap_or(wanted);
    let tables = closest(wanted, catalog.tables.iter().map(|t| t.name.as_str()), max);
    let mut matches = tables;
    if last_part != wanted {
        for table in closest(
            last_part,
            catalog.tables.iter().map(|t| t.name.as_str()),
            max,
        ) {
            if !matches.contains(&table) {
                matches.push(table);
            }
        }
    }
    let mut column_names: Vec<(String, &str)> = Vec::new();
    for table in &catalog.tables {
        for column in &table.columns {
            column_names.push((
                format!("{}.{}", table.name, column.name),
                column.name.as_str(),
            ));
        }
    }
    let close_columns = closest(last_part, column_names.iter().map(|(_, c)| *c), usize::MAX);
    for column in close_columns {
        for (qualified, bare) in &column_names {
            if *bare == column && !matches.contains(qualified) {
                matches.push(qualified.clone());
            }
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
    fn levenshtein_counts_single_edits() {
        assert_eq!(levenshtein("", ""), 0);
        assert_eq!(levenshtein("abc", ""), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("cgm_reading", "cgm_readings"), 1);
        assert_eq!(levenshtein("events", "evnets"), 2);
        assert_eq!(levenshtein("glücose", "glucose"), 1);
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
    fn catalog_matches_offers_tables_then_qualified_columns() {
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
        assert_eq!(
            catalog_matches("cgm_reading", &catalog, 5),
            vec!["cgm_readings"]
        );
        assert_eq!(
            catalog_matches("glucose_mgdl", &catalog, 5),
            vec!["cgm_readings.glucose_mg_dl"]
        );
        assert_eq!(
            catalog_matches("cgm_readings.glucose", &catalog, 5),
            vec!["cgm_readings", "cgm_readings.glucose_mg_dl"]
        );
    }
}
