//! The human-readable `content[0].text` of each tool result.
//!
//! Structured data is never clipped; only this text is, so a huge cell cannot flood a chat window.

use std::borrow::Cow;

use serde_json::Value;

use crate::gateway::SpillInfo;
use crate::protocol::{ColumnInfo, ColumnMeta, ForeignKey, Posture, QueryResult, TableInfo};
use crate::sandbox::budget::{BudgetSource, WorkerMemory};
use crate::sandbox::temp_dir::Backing;
use crate::size::format_size;

/// Longest cell shown in text, in characters; longer cells end with `…`.
pub const MAX_CELL_CHARS: usize = 80;

/// The truncation notice, word for word from the seeds.
pub const TRUNCATED_SUFFIX: &str =
    "(results truncated — set a higher limit or add a WHERE clause to narrow results)";

/// One cell as text: NULL, strings bare, everything else as compact JSON.
fn cell_text(value: &Value) -> Cow<'_, str> {
    match value {
        Value::Null => Cow::Borrowed("NULL"),
        Value::String(s) => Cow::Borrowed(s),
        Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_) => {
            Cow::Owned(value.to_string())
        }
    }
}

/// Whether `c` could end a line of text in some reader, or is otherwise a control character: the
/// line terminators of Unicode (`\n`, `\r`, vertical tab, form feed, NEL, U+2028, U+2029) and
/// every C0 and C1 control but the tab. Text from the data (names, comments, cells) must never hold one
/// where the server's own lines (`Next:`, `Hint:`) could start after it.
pub fn breaks_lines(c: char) -> bool {
    (c.is_control() && c != '\t') || c == '\u{2028}' || c == '\u{2029}'
}

/// A name, type, comment or other text from the database, as one line of the server's text:
/// each character that [`breaks_lines`] escaped (`\n`, `\u{2028}`), so the text cannot start
/// a line of its own, nor pose as the server's guidance. Borrowed when nothing needs escaping
/// (nearly always).
pub fn inline(text: &str) -> Cow<'_, str> {
    if !text.contains(breaks_lines) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if breaks_lines(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Clip to `MAX_CELL_CHARS` characters and flatten line breaks so rows stay one line each.
pub fn clip(text: &str) -> String {
    clipped(Cow::Borrowed(text)).into_owned()
}

/// [`clip`], borrowing the text when it needs no change (most cells: a result of 1,000 rows
/// would otherwise copy every cell twice).
fn clipped(text: Cow<'_, str>) -> Cow<'_, str> {
    let breaks = |c: char| c == '\t' || breaks_lines(c);
    let fits = char_count(&text) <= MAX_CELL_CHARS;
    if fits && !text.contains(breaks) {
        return text;
    }
    let flat = text.chars().map(|c| if breaks(c) { ' ' } else { c });
    if fits {
        Cow::Owned(flat.collect())
    } else {
        let mut clipped: String = flat.take(MAX_CELL_CHARS - 1).collect();
        clipped.push('…');
        Cow::Owned(clipped)
    }
}

/// Characters in `text` (its length when it is ASCII, as most cells are).
fn char_count(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().count()
    }
}

/// Aligned columns with a header, then `N rows returned.` (and the truncation notice).
pub fn query_text(result: &QueryResult) -> String {
    let mut out = rows_table_text(&result.columns, &result.rows);
    out.push_str(&rows_returned(result.row_count, result.truncated));
    out
}

/// The aligned table of `rows` under a header of `columns`' names, each line ending in a line
/// break (nothing without columns).
pub fn rows_table_text(columns: &[ColumnMeta], rows: &[Vec<Value>]) -> String {
    let headers: Vec<Cow<'_, str>> = columns
        .iter()
        .map(|c| clipped(Cow::Borrowed(c.name.as_str())))
        .collect();
    let cells: Vec<Vec<Cow<'_, str>>> = rows
        .iter()
        .map(|row| row.iter().map(|v| clipped(cell_text(v))).collect())
        .collect();
    // Numbers read best right-aligned; a column is numeric when every non-null cell is a number.
    let numeric: Vec<bool> = (0..headers.len())
        .map(|i| {
            rows.iter()
                .all(|row| matches!(row.get(i), Some(Value::Number(_) | Value::Null) | None))
                && rows
                    .iter()
                    .any(|row| matches!(row.get(i), Some(Value::Number(_))))
        })
        .collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| char_count(h)).collect();
    for row in &cells {
        for (i, cell) in row.iter().enumerate() {
            if let Some(width) = widths.get_mut(i) {
                *width = (*width).max(char_count(cell));
            }
        }
    }
    let mut out = String::new();
    if !headers.is_empty() {
        let line = |values: &[Cow<'_, str>], out: &mut String| {
            let start = out.len();
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    out.push_str(" | ");
                }
                let width = widths.get(i).copied().unwrap_or(0);
                let pad = width.saturating_sub(char_count(v));
                if numeric.get(i).copied().unwrap_or(false) {
                    out.extend(std::iter::repeat_n(' ', pad));
                    out.push_str(v);
                } else {
                    out.push_str(v);
                    out.extend(std::iter::repeat_n(' ', pad));
                }
            }
            // No trailing blanks (the last column is left-aligned text, or a row ends in
            // empty cells), but the line's own leading blanks stay.
            let kept = start + out[start..].trim_end().len();
            out.truncate(kept);
            out.push('\n');
        };
        line(&headers, &mut out);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&rule.join("-+-"));
        out.push('\n');
        for row in &cells {
            line(row, &mut out);
        }
    }
    out
}

/// Upper bounds of the bytes [`rows_table_text`] of the first k of `rows` takes once escaped
/// as a JSON string (without its quotes): the header and its rule, and one bound per row's line.
/// Each line is bounded at the widths of all of `rows`, which the first k never exceed, and
/// before its trailing blanks are trimmed, so the table of any first k rows is at most the
/// header's bound plus the first k lines' bounds.
pub fn rows_table_bounds(columns: &[ColumnMeta], rows: &[Vec<Value>]) -> (usize, Vec<usize>) {
    if columns.is_empty() {
        return (0, vec![0; rows.len()]);
    }
    // (escaped bytes, characters) of each header and cell.
    let measure = |text: Cow<'_, str>| (json_escaped_len(&text), char_count(&text));
    let headers: Vec<(usize, usize)> = columns
        .iter()
        .map(|c| measure(clipped(Cow::Borrowed(c.name.as_str()))))
        .collect();
    let cells: Vec<Vec<(usize, usize)>> = rows
        .iter()
        .map(|row| row.iter().map(|v| measure(clipped(cell_text(v)))).collect())
        .collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.1).collect();
    for row in &cells {
        for (i, cell) in row.iter().enumerate() {
            if let Some(width) = widths.get_mut(i) {
                *width = (*width).max(cell.1);
            }
        }
    }
    let separators = 3 * (columns.len() - 1);
    // A line's cells, each padded to its width, the separators, and `\n` escaped as 2 bytes.
    let line = |values: &[(usize, usize)]| -> usize {
        values
            .iter()
            .enumerate()
            .map(|(i, &(bytes, chars))| {
                bytes + widths.get(i).copied().unwrap_or(0).saturating_sub(chars)
            })
            .sum::<usize>()
            + separators
            + 2
    };
    let rule = widths.iter().sum::<usize>() + separators + 2;
    (
        line(&headers) + rule,
        cells.iter().map(|row| line(row)).collect(),
    )
}

/// Bytes of `text` inside a JSON string as serde_json writes it: `"` and `\\` and the short
/// control escapes take 2, other control characters 6 (`\u001f`).
fn json_escaped_len(text: &str) -> usize {
    text.chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum()
}

/// The last line of a reply whose rows were cut to fit the reply's byte budget: how many rows
/// are shown, how many were left out, and what to do instead.
pub fn budget_cut(shown: usize, left_out: usize, more_beyond: bool, budget: usize) -> String {
    let rows = if shown == 1 { "row" } else { "rows" };
    let why = match (left_out, more_beyond) {
        (0, _) => "the query's further rows were left out".to_string(),
        (n, false) => format!("{n} more were left out"),
        (n, true) => format!("{n} more, and the query's rows after them, were left out"),
    };
    format!(
        "{shown} {rows} returned (results truncated); {why} to keep this reply under {budget} \
         bytes. {BUDGET_NEXT_STEP}"
    )
}

/// What to do when a result does not fit one reply.
pub const BUDGET_NEXT_STEP: &str = "Next: aggregate in SQL (GROUP BY, count, avg), add a LIMIT \
     or a narrower WHERE, or draw the rows with the plot tool.";

/// What to do when a result stopped at its row limit.
pub const LIMIT_NEXT_STEP: &str = "Next: set a higher limit or add a WHERE clause to narrow \
     results; to see a long series whole, aggregate it or draw it with the plot tool.";

/// `N rows returned.` (`1 row returned.`) or the truncated form.
pub fn rows_returned(count: usize, truncated: bool) -> String {
    let rows = if count == 1 { "row" } else { "rows" };
    if truncated {
        format!("{count} {rows} returned {TRUNCATED_SUFFIX}.")
    } else {
        format!("{count} {rows} returned.")
    }
}

/// The databases a server serves, by name, the default first and marked so:
/// `cgm (default), pump`.
pub fn databases_text(databases: &crate::protocol::databases::Databases) -> String {
    databases
        .iter()
        .enumerate()
        .map(|(at, database)| {
            if at == 0 && databases.len() > 1 {
                format!("{} (default)", inline(&database.name))
            } else {
                inline(&database.name).into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A relation's name as SQL writes it: `schema.name` for the default database's, and
/// `database.schema.name` for another's.
pub fn relation_name(table: &TableInfo, default_database: &str) -> String {
    if table.database.is_empty() || table.database.eq_ignore_ascii_case(default_database) {
        format!("{}.{}", inline(&table.schema), inline(&table.name))
    } else {
        format!(
            "{}.{}.{}",
            inline(&table.database),
            inline(&table.schema),
            inline(&table.name)
        )
    }
}

/// One line per table: `schema.name (kind, ~rows rows, N columns) — description`, another
/// database's as `database.schema.name`; with several `databases` (the default first), a line
/// that names them first.
pub fn tables_text(tables: &[TableInfo], databases: &[String]) -> String {
    if tables.is_empty() {
        return "No tables or views found.".to_string();
    }
    let default = databases.first().map_or("", String::as_str);
    let mut out = String::new();
    if let [default, others @ ..] = databases
        && !others.is_empty()
    {
        out.push_str(&format!(
            "Databases: {} (default: its tables need no prefix), {}.\n",
            inline(default),
            others
                .iter()
                .map(|d| inline(d))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out.push_str(&format!("{} tables and views:\n", tables.len()));
    for table in tables {
        out.push_str(&format!(
            "- {} ({}",
            relation_name(table, default),
            table.kind.as_str()
        ));
        if let Some(rows) = table.estimated_rows {
            out.push_str(&format!(", ~{rows} rows"));
        }
        out.push_str(&format!(", {} columns)", table.columns.len()));
        if let Some(description) = &table.description {
            out.push_str(&format!(" — {}", clip(description)));
        }
        out.push('\n');
    }
    out.push_str("Next: describe_table for columns, then query.");
    out
}

fn column_line(column: &ColumnInfo) -> String {
    let mut flags: Vec<String> = Vec::new();
    if column.primary_key {
        flags.push("PRIMARY KEY".into());
    }
    // A primary key is unique by definition; saying both is noise.
    if column.unique && !column.primary_key {
        flags.push("UNIQUE".into());
    }
    if !column.nullable {
        flags.push("NOT NULL".into());
    }
    if let Some(default) = &column.default {
        flags.push(format!("DEFAULT {}", clip(default)));
    }
    if let Some(reference) = &column.references {
        flags.push(format!("→ {}", inline(&reference.to_string())));
    }
    let mut line = format!("- {} {}", inline(&column.name), inline(&column.data_type));
    if !flags.is_empty() {
        line.push_str(&format!(" [{}]", flags.join(", ")));
    }
    if let Some(comment) = &column.comment {
        line.push_str(&format!(" — {}", clip(comment)));
    }
    line
}

/// A table's columns, indexes and foreign keys; `default` is the default database's name
/// (another database's table is named with its database).
pub fn table_text(table: &TableInfo, foreign_keys: &[&ForeignKey], default: &str) -> String {
    let mut out = format!("{} ({}", relation_name(table, default), table.kind.as_str());
    if let Some(rows) = table.estimated_rows {
        out.push_str(&format!(", ~{rows} rows"));
    }
    out.push(')');
    if let Some(description) = &table.description {
        out.push_str(&format!(" — {}", clip(description)));
    }
    out.push_str(&format!("\nColumns ({}):\n", table.columns.len()));
    for column in &table.columns {
        out.push_str(&column_line(column));
        out.push('\n');
    }
    if !table.indexes.is_empty() {
        out.push_str("Indexes:\n");
        for index in &table.indexes {
            let unique = if index.unique { " (unique)" } else { "" };
            out.push_str(&format!("- {}{}\n", inline(&index.name), unique));
        }
    }
    if !foreign_keys.is_empty() {
        out.push_str("Foreign keys:\n");
        for key in foreign_keys {
            out.push_str(&format!("- {}\n", foreign_key_text(key, default)));
        }
    }
    out.trim_end().to_string()
}

/// `table(a, b) → other(x, y)`; another database's than `default` as
/// `pump: table(a, b) → other(x, y)`.
pub fn foreign_key_text(key: &ForeignKey, default: &str) -> String {
    let names = |names: &[String]| {
        names
            .iter()
            .map(|name| inline(name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let database = if key.database.is_empty() || key.database.eq_ignore_ascii_case(default) {
        String::new()
    } else {
        format!("{}: ", inline(&key.database))
    };
    format!(
        "{database}{}({}) → {}({})",
        inline(&key.table),
        names(&key.columns),
        inline(&key.referenced_table),
        names(&key.referenced_columns)
    )
}

/// The memory budget in one line: `12.0 GiB budget (half of this machine's memory) for 4
/// running workers and 5 idle ones: each running one capped at 2.8 GiB, DuckDB memory_limit
/// 2.2 GiB`.
pub fn memory_text(memory: &WorkerMemory) -> String {
    let source = match memory.budget_source {
        BudgetSource::Flag => "--memory-budget",
        BudgetSource::HalfOfMemory => "half of this machine's memory",
    };
    format!(
        "{} budget ({source}) for {} running workers and {} idle ones (spares, template): each \
         capped at {}, DuckDB memory_limit {}",
        format_size(memory.budget_bytes),
        memory.slots,
        memory.idle_processes,
        format_size(memory.cap_bytes),
        format_size(memory.duckdb_limit_bytes)
    )
}

/// Where workers spill, in one line.
pub fn spill_text(spill: Option<&SpillInfo>) -> String {
    match spill {
        None => "off (--max-temp-size 0): a query past DuckDB's memory_limit fails".to_string(),
        Some(spill) => {
            let backing = match spill.backing {
                Backing::Disk => "on disk",
                Backing::Memory => "in RAM (tmpfs): spilled data does not relieve memory",
            };
            format!(
                "up to {} per worker, in a private directory under {} ({backing}), removed when the worker ends",
                format_size(spill.max_bytes_per_worker),
                spill.root.display()
            )
        }
    }
}

/// The sandbox posture as `server_info` and `duckgate check-sandbox` show it: the mechanisms,
/// then one line per promise of confinement with what keeps it on this kernel.
pub fn posture_text(posture: &Posture) -> String {
    let mut text = format!(
        "Sandbox: landlock {} (ABI {}), seccomp {}, no_new_privs {}",
        posture.landlock.as_str(),
        posture
            .landlock_abi
            .map_or("none".to_string(), |abi| abi.to_string()),
        if posture.seccomp { "on" } else { "off" },
        if posture.no_new_privs { "on" } else { "off" },
    );
    for property in &posture.properties {
        text.push_str(&format!(
            "\n  {} ({}): {}{}",
            property.property,
            property.promise,
            if property.enforced {
                ""
            } else {
                "NOT ENFORCED: "
            },
            property.mechanism
        ));
    }
    text
}

/// `duckgate check-sandbox`'s report: the verdict, the kernel, the posture, and when a
/// promise cannot be kept, the gaps and the fix.
pub fn sandbox_report(posture: &Posture, confined: bool) -> String {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|release| format!("Linux {}", release.trim()))
        .unwrap_or_else(|_| "this kernel".into());
    let mut text = if confined {
        format!("{kernel}: duckgate confines its query workers fully here.\n")
    } else {
        format!(
            "{kernel}: duckgate cannot confine its query workers fully here, and refuses to \
             start without --allow-unconfined.\n"
        )
    };
    text.push_str(&posture_text(posture));
    if !posture.bypassed_layers.is_empty() {
        text.push_str(&format!(
            "\nWARNING: test bypasses in force: {}",
            posture.bypassed_layers.join(", ")
        ));
    }
    if !confined {
        let gaps = crate::sandbox::preflight::gaps(posture);
        for gap in &gaps {
            text.push_str(&format!("\nMissing: {gap}"));
        }
        text.push_str(&format!("\n{}", crate::sandbox::preflight::fix_for(&gaps)));
    }
    text
}

/// Where workers come from, in a line of `server_info`'s text.
pub(super) fn workers_text(origin: &crate::sandbox::pool::WorkerOrigin) -> String {
    use crate::sandbox::pool::WorkerOrigin;
    match origin {
        WorkerOrigin::Template {
            template_pid,
            template_starts,
        } => format!(
            "one fresh confined process per query, forked from a warm template (pid \
             {template_pid}, started {template_starts} time(s))"
        ),
        WorkerOrigin::Spawned { reason } => {
            format!("one fresh confined process per query, spawned (slower start): {reason}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(rows: Vec<Vec<Value>>, truncated: bool) -> QueryResult {
        QueryResult {
            columns: vec![
                ColumnMeta {
                    name: "id".into(),
                    data_type: "INTEGER".into(),
                },
                ColumnMeta {
                    name: "note".into(),
                    data_type: "VARCHAR".into(),
                },
            ],
            row_count: rows.len(),
            rows,
            truncated,
            duration_ms: 1.0,
        }
    }

    #[test]
    fn the_table_bounds_are_never_below_the_escaped_table_of_any_first_rows() {
        let notes = [
            "plain",
            "a \"quoted\" \\ path",
            "line\nbreak\tand tab",
            "ünïcödé ✓ 血糖",
            "\u{1} control",
            "",
            "trailing   ",
        ];
        let rows: Vec<Vec<Value>> = (0..40)
            .map(|i| {
                vec![
                    if i % 5 == 0 {
                        Value::Null
                    } else {
                        json!(i * 997)
                    },
                    json!(notes[i % notes.len()].repeat(1 + i % 3)),
                ]
            })
            .collect();
        let result = result(rows, false);
        let (header, lines) = rows_table_bounds(&result.columns, &result.rows);
        assert_eq!(lines.len(), 40);
        for k in 0..=40 {
            let table = rows_table_text(&result.columns, &result.rows[..k]);
            let escaped = serde_json::to_string(&table).unwrap().len() - 2;
            let bound = header + lines[..k].iter().sum::<usize>();
            assert!(escaped <= bound, "{k} rows: {escaped} > {bound}");
        }
    }

    #[test]
    fn query_text_aligns_columns_under_a_header_and_counts_rows() {
        let text = query_text(&result(
            vec![vec![json!(1), json!("a")], vec![json!(100), Value::Null]],
            false,
        ));
        assert_eq!(
            text,
            " id | note\n----+-----\n  1 | a\n100 | NULL\n2 rows returned."
        );
    }

    #[test]
    fn truncated_results_say_so_in_the_seed_words() {
        let text = query_text(&result(vec![vec![json!(1), json!("a")]], true));
        assert!(text.ends_with(
            "1 row returned (results truncated — set a higher limit or add a WHERE clause to narrow results)."
        ));
    }

    #[test]
    fn long_cells_are_clipped_in_text_only() {
        let long = "x".repeat(500);
        let data = result(vec![vec![json!(1), json!(long.clone())]], false);
        let text = query_text(&data);
        assert!(text.contains(&format!("{}…", "x".repeat(MAX_CELL_CHARS - 1))));
        assert!(!text.contains(&"x".repeat(MAX_CELL_CHARS)));
        assert_eq!(data.rows[0][1], json!(long));
    }

    #[test]
    fn cells_with_line_breaks_or_wide_characters_stay_on_one_aligned_line() {
        let text = query_text(&result(
            vec![
                vec![json!(7), json!("two\nlines\tand a tab")],
                vec![json!(8), json!("mg/dL · über")],
                vec![json!(9), json!("")],
            ],
            false,
        ));
        assert_eq!(
            text,
            "id | note\n\
             ---+--------------------\n \
              7 | two lines and a tab\n \
              8 | mg/dL · über\n \
              9 |\n\
             3 rows returned."
        );
        // Clipping counts characters, not bytes.
        let clipped = clip(&"é".repeat(MAX_CELL_CHARS + 1));
        assert_eq!(clipped.chars().count(), MAX_CELL_CHARS);
        assert!(clipped.ends_with('…'));
        assert_eq!(
            clip(&"é".repeat(MAX_CELL_CHARS)),
            "é".repeat(MAX_CELL_CHARS)
        );
    }

    #[test]
    fn zero_rows_still_show_the_header() {
        let text = query_text(&result(vec![], false));
        assert!(text.starts_with("id | note\n"));
        assert!(text.ends_with("0 rows returned."));
    }
}
