//! Sizes as DuckDB and people write them (`512MB`, `1.5GiB`): the flags' parser and the text
//! the posture and the errors show. At the bottom of the crate, so the engine, the sandbox and
//! the MCP layer share it without reaching into each other.

/// One mebibyte.
const MIB: u64 = 1024 * 1024;

/// Parse a size the way DuckDB writes them (`512MB`, `2GB`, `1.5GiB`, `1000000B`) into bytes.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().ok()?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = value * mult;
    (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
}

/// A size flag's value parser for clap. Its error stays a `String`: it is the command line's
/// message and nothing else reads it.
pub fn size_arg(text: &str) -> Result<u64, String> {
    parse_size(text).ok_or_else(|| format!("{text:?} is not a size like 512MB, 2GB or 1.5GiB"))
}

/// A size for people: `2.3 GiB`, `512 MiB`.
pub fn format_size(bytes: u64) -> String {
    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
    let b = bytes as f64;
    if b >= GIB {
        format!("{:.1} GiB", b / GIB)
    } else {
        format!("{} MiB", bytes / MIB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1024 * MIB;

    #[test]
    fn sizes_parse_as_duckdb_writes_them_and_print_for_people() {
        assert_eq!(parse_size("2GB"), Some(2_000_000_000));
        assert_eq!(parse_size("512MiB"), Some(512 * MIB));
        assert_eq!(parse_size("1.5gb"), Some(1_500_000_000));
        assert_eq!(parse_size("1000B"), Some(1000));
        assert_eq!(parse_size("0"), Some(0));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("2XB"), None);
        assert_eq!(format_size(3 * GIB / 2), "1.5 GiB");
        assert_eq!(format_size(300 * MIB), "300 MiB");
    }
}
