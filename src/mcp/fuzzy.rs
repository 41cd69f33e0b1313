//! "Did you mean": catalog names close to a name the agent got wrong.
//!
//! Bounded: a wanted name longer than [`MAX_WANTED_CHARS`] gets no suggestions, at most
//! [`MAX_CANDIDATES`] names are compared with it, and distances that cannot come within the
//! budget are not computed. The `*_off_thread` forms run on tokio's blocking pool, so a slow
//! comparison never holds up the async threads that answer other calls.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::protocol::CatalogSnapshot;

/// Longest name, in characters, that "did you mean" looks for; a longer one gets no suggestions
/// (no catalog name that long is a typo away from it in practice, and the cost grows with it).
pub const MAX_WANTED_CHARS: usize = 256;
/// Most catalog names compared with one wanted name: the first this many.
pub const MAX_CANDIDATES: usize = 10_000;

/// Levenshtein distance (insertions, deletions, substitutions) by characters, with a swap of two
/// adjacent characters also counted as one edit (optimal string alignment), since `mian` for
/// `main` is the commonest typo of all.
#[allow(
    clippy::indexing_slicing,
    reason = "the table's indices stay in range: i < a.len(), j < b.len(), and each row holds \
              b.len() + 1 entries"
)]
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
/// `cgm_readings`, when it is within `budget`. Words shorter than 4 characters (and short wanted
/// names) are too noisy to use. Words whose length alone puts them past the budget are skipped.
fn word_distance(
    wanted: &str,
    wanted_chars: usize,
    candidate: &str,
    budget: usize,
) -> Option<usize> {
    if wanted_chars < 4 {
        return None;
    }
    candidate
        .split('_')
        .filter(|word| {
            let chars = word.chars().count();
            chars >= 4 && word.len() != candidate.len() && chars.abs_diff(wanted_chars) <= budget
        })
        .map(|word| edit_distance(wanted, word))
        .min()
        .filter(|distance| *distance <= budget)
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
    // A character takes at most 4 bytes: a longer text is past the cap without counting.
    if wanted.len() > 4 * MAX_WANTED_CHARS {
        return Vec::new();
    }
    let wanted_lower = wanted.to_lowercase();
    let wanted_chars = wanted_lower.chars().count();
    if wanted_lower.is_empty() || wanted_chars > MAX_WANTED_CHARS {
        return Vec::new();
    }
    let budget = budget(&wanted_lower);
    // (score, longest shared prefix reversed so longer sorts first, name)
    let mut scored: Vec<(usize, std::cmp::Reverse<usize>, String)> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for candidate in candidates.into_iter().take(MAX_CANDIDATES) {
        // The same name scores the same: only its first occurrence counts.
        if !seen.insert(candidate) {
            continue;
        }
        let candidate_lower = candidate.to_lowercase();
        // The distance is at least the difference in length: skip what cannot be within budget.
        let whole = (candidate_lower.chars().count().abs_diff(wanted_chars) <= budget)
            .then(|| edit_distance(&wanted_lower, &candidate_lower))
            .filter(|distance| *distance <= budget);
        let contains = candidate_lower.contains(&wanted_lower)
            || (candidate_lower.len() >= 3 && wanted_lower.contains(&candidate_lower));
        // Whole-name near misses rank first, then near misses of one word, then containment.
        let score = if let Some(whole) = whole {
            Some(whole)
        } else if let Some(word) =
            word_distance(&wanted_lower, wanted_chars, &candidate_lower, budget)
        {
            Some(budget + 1 + word)
        } else if contains {
            Some(2 * budget + 2)
        } else {
            None
        };
        if let Some(score) = score {
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

/// [`closest`] on tokio's blocking pool. The candidates are copied (at most
/// [`MAX_CANDIDATES`]) before it returns, so the future borrows nothing.
pub fn closest_off_thread<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> impl Future<Output = Vec<String>> + Send + 'static {
    let work = (wanted.len() <= 4 * MAX_WANTED_CHARS).then(|| {
        let candidates: Vec<String> = candidates
            .into_iter()
            .take(MAX_CANDIDATES)
            .map(str::to_owned)
            .collect();
        (wanted.to_string(), candidates)
    });
    async move {
        let Some((wanted, candidates)) = work else {
            return Vec::new();
        };
        tokio::task::spawn_blocking(move || {
            closest(&wanted, candidates.iter().map(String::as_str), max)
        })
        .await
        .unwrap_or_default()
    }
}

/// [`catalog_matches`] on tokio's blocking pool.
pub fn catalog_matches_off_thread(
    wanted: &str,
    catalog: Arc<CatalogSnapshot>,
    looking: Looking,
    max: usize,
) -> impl Future<Output = Vec<CatalogMatch>> + Send + 'static {
    let wanted = (wanted.len() <= 4 * MAX_WANTED_CHARS + 2).then(|| wanted.to_string());
    async move {
        let Some(wanted) = wanted else {
            return Vec::new();
        };
        tokio::task::spawn_blocking(move || catalog_matches(&wanted, &catalog, looking, max))
            .await
            .unwrap_or_default()
    }
}

/// What kind of name the agent got wrong, when the error says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Looking {
    /// A table or view (or we cannot tell): tables first, then columns.
    ForTable,
    /// A column: columns first, then tables.
    ForColumn,
}

/// A name of the catalog close to what the agent wrote: a table, or a column of one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CatalogMatch {
    /// A table or view.
    Table(String),
    /// A column, with its table.
    Column {
        /// The table it is a column of.
        table: String,
        /// The column.
        column: String,
    },
}

impl CatalogMatch {
    /// As the agent would write it: `table` or `table.column`.
    pub fn written(&self) -> String {
        match self {
            CatalogMatch::Table(table) => table.clone(),
            CatalogMatch::Column { table, column } => format!("{table}.{column}"),
        }
    }
}

/// The last dotted part of a name the agent wrote (`glucose` of `r.glucose`), unquoted: what
/// `search_schema` is best asked about.
pub fn last_part(written: &str) -> &str {
    written
        .rsplit('.')
        .next()
        .unwrap_or(written)
        .trim_matches('"')
}

/// How SQL names `table` in a suggestion: its name for the default database's (as before),
/// `database.schema.name` for another database's, so a suggestion is a name that resolves.
fn written_table(catalog: &CatalogSnapshot, table: &crate::protocol::TableInfo) -> String {
    if catalog.in_default_database(table) {
        table.name.clone()
    } else {
        format!("{}.{}.{}", table.database, table.schema, table.name)
    }
}

/// Tables close to `wanted` (or to its last dotted part), of every database, as SQL names them
/// ([`written_table`]). Names are compared bare: `boluses` finds `pump.main.boluses`.
fn table_matches(wanted: &str, catalog: &CatalogSnapshot, max: usize) -> Vec<String> {
    let last_part = wanted.rsplit('.').next().unwrap_or(wanted);
    let names = || catalog.tables.iter().map(|t| t.name.as_str());
    let mut bare = closest(wanted, names(), max);
    if last_part != wanted {
        for table in closest(last_part, names(), max) {
            if !bare.contains(&table) {
                bare.push(table);
            }
        }
    }
    let mut matches = Vec::new();
    for name in bare {
        for table in catalog.tables.iter().filter(|t| t.name == name) {
            let written = written_table(catalog, table);
            if !matches.contains(&written) {
                matches.push(written);
            }
        }
    }
    matches.truncate(max);
    matches
}

/// Columns close to the last dotted part of `wanted`, each with its table.
fn column_matches(wanted: &str, catalog: &CatalogSnapshot) -> Vec<CatalogMatch> {
    let last_part = wanted.rsplit('.').next().unwrap_or(wanted);
    let column_names: Vec<(String, &str)> = catalog
        .tables
        .iter()
        .flat_map(|table| {
            let written = written_table(catalog, table);
            table
                .columns
                .iter()
                .map(move |column| (written.clone(), column.name.as_str()))
        })
        .take(MAX_CANDIDATES)
        .collect();
    // Each bare column name's tables, in catalog order.
    let mut by_bare: HashMap<&str, Vec<&str>> = HashMap::new();
    for (table, bare) in &column_names {
        by_bare.entry(bare).or_default().push(table.as_str());
    }
    let mut matches = Vec::new();
    let mut seen = HashSet::new();
    for column in closest(last_part, column_names.iter().map(|(_, c)| *c), usize::MAX) {
        for table in by_bare.get(column.as_str()).into_iter().flatten() {
            if seen.insert((*table, column.clone())) {
                matches.push(CatalogMatch::Column {
                    table: (*table).to_owned(),
                    column: column.clone(),
                });
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
) -> Vec<CatalogMatch> {
    let wanted = wanted.trim_matches('"');
    let tables = || {
        table_matches(wanted, catalog, max)
            .into_iter()
            .map(CatalogMatch::Table)
            .collect::<Vec<_>>()
    };
    let (first, second) = match looking {
        Looking::ForTable => (tables(), column_matches(wanted, catalog)),
        Looking::ForColumn => (column_matches(wanted, catalog), tables()),
    };
    let mut seen: HashSet<CatalogMatch> = first.iter().cloned().collect();
    let mut matches = first;
    for found in second {
        if matches.len() >= max {
            break;
        }
        if seen.insert(found.clone()) {
            matches.push(found);
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
            default_reads: None,
            view_reads: None,
        }
    }

    /// One table, `cgm_readings (glucose_mg_dl, ts)`.
    fn readings_catalog() -> CatalogSnapshot {
        CatalogSnapshot {
            databases: vec!["health".into()],
            tables: vec![TableInfo {
                database: "health".into(),
                schema: "main".into(),
                name: "cgm_readings".into(),
                kind: crate::protocol::RelationKind::Table,
                description: None,
                estimated_rows: None,
                columns: vec![column("glucose_mg_dl"), column("ts")],
                indexes: vec![],
            }],
            foreign_keys: vec![],
            table_macros: vec![],
        }
    }

    #[test]
    fn catalog_matches_offer_the_kind_looked_for_first() {
        let catalog = readings_catalog();
        let table = Looking::ForTable;
        let catalog_matches = |wanted, catalog, looking, max| -> Vec<String> {
            catalog_matches(wanted, catalog, looking, max)
                .iter()
                .map(CatalogMatch::written)
                .collect()
        };
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

    #[test]
    fn suggestions_span_every_database_and_name_another_databases_table_as_sql_must() {
        let mut catalog = readings_catalog();
        catalog.databases.push("pump".into());
        catalog.tables.push(TableInfo {
            database: "pump".into(),
            name: "boluses".into(),
            columns: vec![column("units")],
            ..catalog.tables[0].clone()
        });
        let written = |wanted, looking| -> Vec<String> {
            catalog_matches(wanted, &catalog, looking, 5)
                .iter()
                .map(CatalogMatch::written)
                .collect()
        };
        assert_eq!(written("bolus", Looking::ForTable), ["pump.main.boluses"]);
        assert_eq!(
            written("unit", Looking::ForColumn),
            ["pump.main.boluses.units"]
        );
        // The default database's are named as before.
        assert_eq!(written("cgm_reading", Looking::ForTable), ["cgm_readings"]);
    }

    #[test]
    fn a_name_past_the_cap_gets_no_suggestions_and_one_at_the_cap_still_does() {
        let at_cap = "a".repeat(MAX_WANTED_CHARS);
        let mut near = at_cap.clone();
        near.push('b');
        assert_eq!(closest(&at_cap, [near.as_str()], 5), vec![near.clone()]);
        let past_cap = "a".repeat(MAX_WANTED_CHARS + 1);
        assert!(closest(&past_cap, [near.as_str()], 5).is_empty());
        // Containment would match it, were it compared at all.
        let huge = "cgm_readings".repeat(1_000_000);
        assert!(closest(&huge, ["cgm_readings"], 5).is_empty());
    }

    #[test]
    fn only_the_first_max_candidates_are_compared() {
        let mut names: Vec<String> = (0..MAX_CANDIDATES).map(|i| format!("zz{i}zz")).collect();
        names.push("cgm_readings".into());
        assert!(closest("cgm_reading", names.iter().map(String::as_str), 5).is_empty());
        names.insert(0, "cgm_readings".into());
        assert_eq!(
            closest("cgm_reading", names.iter().map(String::as_str), 5),
            vec!["cgm_readings"]
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn the_off_thread_forms_give_the_same_answers() {
        let names = ["cgm_readings", "events", "raw_events", "basal_deliveries"];
        assert_eq!(
            closest_off_thread("evnts", names, 5).await,
            closest("evnts", names, 5)
        );
        assert!(
            closest_off_thread(&"x".repeat(1 << 20), names, 5)
                .await
                .is_empty()
        );
        let catalog = Arc::new(readings_catalog());
        assert_eq!(
            catalog_matches_off_thread("glucose_mgdl", Arc::clone(&catalog), Looking::ForTable, 5)
                .await,
            [CatalogMatch::Column {
                table: "cgm_readings".into(),
                column: "glucose_mg_dl".into()
            }]
        );
    }
}
