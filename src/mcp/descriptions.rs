//! What only the MCP layer needs from the operator: the descriptions of tables
//! (`--descriptions FILE.toml`) the tools and resources show.

use std::collections::HashMap;
use std::path::Path;

/// What only the MCP layer needs from the operator.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// Table descriptions from `--descriptions FILE.toml`, keyed by `table`, `schema.table` (the
    /// default database's) or `database.schema.table`;
    /// they override DuckDB's `COMMENT ON` text.
    pub descriptions: HashMap<String, String>,
}

/// Read a descriptions file: `table = "text"` lines, or the same under a `[tables]` section.
///
/// Keys may be `table` or `schema.table` (quote a dotted key: `"main.cgm_readings" = "…"`).
/// An error is the sentence the CLI prints when it refuses to start (a `String`: only a person
/// reads it).
pub fn load_descriptions(path: &Path) -> Result<HashMap<String, String>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read descriptions file {}: {error}", path.display()))?;
    parse_descriptions(&text)
        .map_err(|error| format!("descriptions file {}: {error}", path.display()))
}

fn parse_descriptions(text: &str) -> Result<HashMap<String, String>, String> {
    let document: toml::Table = toml::from_str(text).map_err(|error| error.to_string())?;
    let mut descriptions = HashMap::new();
    for (key, value) in document {
        match value {
            toml::Value::String(description) => {
                descriptions.insert(key, description);
            }
            toml::Value::Table(section) if key == "tables" => {
                for (table, value) in section {
                    match value {
                        toml::Value::String(description) => {
                            descriptions.insert(table, description);
                        }
                        other => {
                            return Err(format!(
                                "tables.{table} must be a string description, not a {}",
                                other.type_str()
                            ));
                        }
                    }
                }
            }
            other => {
                return Err(format!(
                    "'{key}' must be a string description (or a [tables] section), not a {}",
                    other.type_str()
                ));
            }
        }
    }
    Ok(descriptions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_accept_flat_keys_a_tables_section_and_dotted_keys() {
        let parsed = parse_descriptions(
            "cgm_readings = \"Glucose every 5 minutes\"\n\"main.events\" = \"Pump events\"\n\
             [tables]\nbasal_deliveries = \"Basal insulin\"\n",
        )
        .unwrap();
        assert_eq!(parsed["cgm_readings"], "Glucose every 5 minutes");
        assert_eq!(parsed["main.events"], "Pump events");
        assert_eq!(parsed["basal_deliveries"], "Basal insulin");
        assert_eq!(parsed.len(), 3);
    }

    #[test]
    fn descriptions_reject_non_text_values_naming_the_key() {
        let error = parse_descriptions("cgm_readings = 5\n").unwrap_err();
        assert!(error.contains("'cgm_readings' must be a string"), "{error}");
        let error = parse_descriptions("[tables]\nevents = [1]\n").unwrap_err();
        assert!(error.contains("tables.events must be a string"), "{error}");
        assert!(parse_descriptions("this is not toml").is_err());
    }

    #[test]
    fn load_descriptions_names_a_missing_file() {
        let error = load_descriptions(Path::new("/nonexistent/descriptions.toml")).unwrap_err();
        assert!(error.contains("/nonexistent/descriptions.toml"), "{error}");
    }
}
