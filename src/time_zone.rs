//! The operator's local time zone, which the workers' DuckDB uses for `now()`, `current_date`,
//! `date_trunc` on TIMESTAMPTZ and `AT TIME ZONE` without a zone: "yesterday" means the
//! operator's yesterday, not UTC's.
//!
//! The parent works it out once (the workers cannot: landlock keeps them from reading
//! `/etc/localtime`, and ICU would fall back to UTC in silence) and passes the name to every
//! worker, which sets DuckDB's `TimeZone` before the configuration is locked. DuckDB's ICU
//! checks the name: an unknown zone fails every call with DuckDB's list of near names.

use std::path::Path;

/// The zone when nothing names one.
pub const FALLBACK: &str = "UTC";

/// This machine's zone as an IANA name: `TZ` (`Europe/Berlin`, `:Europe/Berlin` or a path
/// into a zoneinfo directory), else `/etc/timezone`, else the target of the `/etc/localtime`
/// link, else UTC.
pub fn local() -> String {
    from_sources(
        std::env::var("TZ").ok().as_deref(),
        std::fs::read_to_string("/etc/timezone").ok().as_deref(),
        std::fs::read_link("/etc/localtime").ok().as_deref(),
    )
}

fn from_sources(tz: Option<&str>, etc_timezone: Option<&str>, localtime: Option<&Path>) -> String {
    if let Some(name) = tz.and_then(|tz| zone_name(tz.trim().trim_start_matches(':'))) {
        return name;
    }
    if let Some(name) = etc_timezone.and_then(|text| zone_name(text.trim())) {
        return name;
    }
    if let Some(name) = localtime.and_then(Path::to_str).and_then(zone_name) {
        return name;
    }
    FALLBACK.to_owned()
}

/// `text` as a zone name: itself, or the part after `zoneinfo/` of a path; `None` when that
/// leaves nothing a zone name can be.
fn zone_name(text: &str) -> Option<String> {
    let name = match text.find("zoneinfo/") {
        Some(at) => &text[at + "zoneinfo/".len()..],
        None if text.starts_with('/') => return None,
        None => text,
    };
    let plausible = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-' | '+'));
    plausible.then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tz_wins_then_etc_timezone_then_the_localtime_link() {
        let link = Path::new("/usr/share/zoneinfo/Europe/Paris");
        assert_eq!(
            from_sources(Some("America/Denver"), Some("Asia/Tokyo\n"), Some(link)),
            "America/Denver"
        );
        assert_eq!(
            from_sources(Some(":Europe/Oslo"), None, None),
            "Europe/Oslo"
        );
        assert_eq!(
            from_sources(Some("/usr/share/zoneinfo/Etc/UTC"), None, None),
            "Etc/UTC"
        );
        assert_eq!(
            from_sources(None, Some("Asia/Tokyo\n"), Some(link)),
            "Asia/Tokyo"
        );
        assert_eq!(from_sources(Some(""), None, Some(link)), "Europe/Paris");
        assert_eq!(
            from_sources(
                None,
                None,
                Some(Path::new("../usr/share/zoneinfo/America/New_York"))
            ),
            "America/New_York"
        );
    }

    #[test]
    fn nothing_usable_means_utc() {
        assert_eq!(from_sources(None, None, None), "UTC");
        assert_eq!(
            from_sources(Some("/etc/weird"), Some("  "), Some(Path::new("/etc/x"))),
            "UTC"
        );
        // Not a name DuckDB could be handed as text safely.
        assert_eq!(from_sources(Some("Europe/Ber'lin"), None, None), "UTC");
    }
}
