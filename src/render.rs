//! Human-readable renderings shared by the CLI and the MCP text content.

use crate::protocol::QueryResult;

/// Longest cell shown in text; structured rows are never clipped.
pub const MAX_CELL_CHARS: usize = 60;

/// The seeds' footer for a result.
pub fn rows_footer(row_count: usize, truncated: bool) -> String {
    if truncated {
        format!(
            "{row_count} rows returned (results truncated — set a higher limit or add a WHERE clause to narrow results)."
        )
    } else {
        format!("{row_count} rows returned.")
    }
}

/// A JSON value as one text cell: strings bare, NULL as `NULL`, the rest as compact JSON.
pub fn cell_text(value: &serde_json::Value) -> String {
    let full = match value {
        serde_json::Value::Null => "NULL".to_string(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let one_line = full.replace(['\n', '\r', '\t'], " ");
    if one_line.chars().count() > MAX_CELL_CHARS {
        let clipped: String = one_line.chars().take(MAX_CELL_CHARS - 1).collect();
        format!("{clipped}…")
    } else {
        one_line
    }
}

/// Aligned columns with a header, then the footer.
pub fn query_table(result: &QueryResult) -> String {
    let headers: Vec<String> = result.columns.iter().map(|c| c.name.clone()).collect();
    let cells: Vec<Vec<String>> = result
        .rows
        .iter()
        .map(|r| r.iter().map(cell_text).collect())
        .collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in &cells {
        for (i, c) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(c.chars().count());
            }
        }
    }
    let line = |values: &[String]| -> String {
        let padded: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let w = widths.get(i).copied().unwrap_or(0);
                format!("{v}{}", " ".repeat(w.saturating_sub(v.chars().count())))
            })
            .collect();
        padded.join(" | ").trim_end().to_string()
    };
    let mut out = String::new();
    if !headers.is_empty() {
        out.push_str(&line(&headers));
        out.push('\n');
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&rule.join("-+-"));
        out.push('\n');
        for row in &cells {
            out.push_str(&line(row));
            out.push('\n');
        }
    }
    out.push_str(&rows_footer(result.row_count, result.truncated));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ColumnMeta;
    use serde_json::json;

    #[test]
    fn table_aligns_columns_and_states_the_seed_footer() {
        let result = QueryResult {
            columns: vec![
                ColumnMeta {
                    name: "id".into(),
                    data_type: "INTEGER".into(),
                },
                ColumnMeta {
                    name: "glucose".into(),
                    data_type: "DOUBLE".into(),
                },
            ],
            rows: vec![
                vec![json!(1), json!(104.5)],
                vec![json!(22), serde_json::Value::Null],
            ],
            row_count: 2,
            truncated: false,
            duration_ms: 1.0,
        };
        let text = query_table(&result);
        assert_eq!(
            text,
            "id | glucose\n---+--------\n1  | 104.5\n22 | NULL\n2 rows returned."
        );
    }

    #[test]
    fn truncated_footer_is_the_seed_sentence() {
        assert_eq!(
            rows_footer(5, true),
            "5 rows returned (results truncated — set a higher limit or add a WHERE clause to narrow results)."
        );
    }

    #[test]
    fn long_cells_are_clipped_in_text_only() {
        let long = "x".repeat(200);
        let cell = cell_text(&json!(long));
        assert_eq!(cell.chars().count(), MAX_CELL_CHARS);
        assert!(cell.ends_with('…'));
    }
}
