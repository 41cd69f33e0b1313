//! What `demo` and `import` print last: how to reach the database from Claude, with paths the
//! person can use where they run it. On Linux, the binary's own path; under WSL, the Windows
//! entry that starts it through `wsl.exe`; in a container, the `docker run -i` entry of the
//! README's container route, whose paths are the container's, which the text says.
//!
//! [`container_desktop_entry`] owns the container entry: the README's macOS and Windows entries
//! are its output (a test compares them), and CI starts the server exactly as the README says.

use std::path::{Path, PathBuf};

/// Where Claude Desktop reads its MCP servers on Windows, as Windows spells the path.
pub const CLAUDE_DESKTOP_CONFIG: &str = r"%APPDATA%\Claude\claude_desktop_config.json";

/// Where Claude Desktop reads its MCP servers on macOS.
pub const CLAUDE_DESKTOP_CONFIG_MACOS: &str =
    "~/Library/Application Support/Claude/claude_desktop_config.json";

/// The image name the README builds (`docker build -t duckgate .`) and its entries run.
pub const IMAGE: &str = "duckgate";

/// Where the README's entries mount the person's folder inside the container.
pub const CONTAINER_FOLDER: &str = "/data";

/// Where this process runs, as far as the next steps care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// Linux itself: Claude Code runs here; Claude Desktop does not.
    Linux,
    /// WSL2 on Windows, in this distribution.
    Wsl {
        /// `WSL_DISTRO_NAME`, or `Ubuntu`.
        distribution: String,
    },
    /// A container: its paths are not the host's.
    Container {
        /// The mount point inside the container that holds the database (`/data`), or `None`
        /// when the database is on the container's own file system, which `--rm` removes.
        mounted_folder: Option<PathBuf>,
        /// `TZ` as the container got it, if set.
        time_zone: Option<String>,
    },
}

/// Where this process runs, for the database `db`: a container when `container` is in the
/// environment (Podman and systemd's container managers set it, and duckgate's image sets it for
/// Docker, which does not), else WSL, else Linux. Not the marker files `/.dockerenv` and
/// `/run/.containerenv`: a machine booted from a container image keeps them.
pub fn detect_host(db: &Path) -> Host {
    if std::env::var_os("container").is_some_and(|v| !v.is_empty()) {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        return Host::Container {
            mounted_folder: mounted_folder(&mountinfo, db),
            time_zone: std::env::var("TZ").ok().filter(|tz| !tz.trim().is_empty()),
        };
    }
    match wsl_distribution() {
        Some(distribution) => Host::Wsl { distribution },
        None => Host::Linux,
    }
}

/// The deepest mount point (not `/`) that holds `db`.
fn mounted_folder(mountinfo: &str, db: &Path) -> Option<PathBuf> {
    mountinfo
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|point| PathBuf::from(point.replace("\\040", " ")))
        .filter(|point| point != Path::new("/") && db.starts_with(point) && point != db)
        .max_by_key(|point| point.components().count())
}

/// The WSL distribution this process runs in, if it runs under WSL: `WSL_DISTRO_NAME`, which
/// WSL sets, else `Ubuntu` when /proc/version names Microsoft's kernel (the distribution's name
/// is then unknown; Ubuntu is WSL's default).
pub fn wsl_distribution() -> Option<String> {
    if let Some(name) = std::env::var("WSL_DISTRO_NAME")
        .ok()
        .filter(|name| !name.trim().is_empty())
    {
        return Some(name);
    }
    let version = std::fs::read_to_string("/proc/version").ok()?;
    version
        .to_ascii_lowercase()
        .contains("microsoft")
        .then(|| "Ubuntu".to_string())
}

/// What to do after the demo or an import: the command that adds `exe serve --db db` to
/// Claude Code (for every project of this user), and for Claude Desktop, which runs on Windows
/// and macOS but not Linux, the entry that reaches this database from there. `exe` and `db`
/// should be absolute: an MCP client starts the server from a directory of its own.
pub fn next_steps(exe: &Path, db: &Path, host: &Host) -> String {
    let exe_text = exe.to_string_lossy();
    let db_text = db.to_string_lossy();
    let (desktop, code) = match host {
        Host::Wsl { distribution } => (
            format!(
                "  Claude Desktop on Windows: add this to {CLAUDE_DESKTOP_CONFIG} (merge it into \
                 an existing \"mcpServers\"), then restart Claude Desktop; it starts duckgate \
                 inside WSL2 through wsl.exe:\n\n{}",
                indent(&wsl_desktop_entry(distribution, &exe_text, &db_text))
            ),
            format!(
                "{} serve --db {}",
                shell_word(&exe_text),
                shell_word(&db_text)
            ),
        ),
        Host::Linux => (
            "  Claude Desktop runs on Windows and macOS, not on Linux. On Windows, install \
             duckgate inside WSL2 and run `duckgate demo` there: it prints the entry that starts \
             it through wsl.exe. On macOS (and on Windows without WSL), run duckgate in a \
             container: see \"Claude Desktop on macOS and Windows, through a container\" in the \
             README.\n"
                .to_string(),
            format!(
                "{} serve --db {}",
                shell_word(&exe_text),
                shell_word(&db_text)
            ),
        ),
        Host::Container {
            mounted_folder,
            time_zone,
        } => container_steps(db, mounted_folder.as_deref(), time_zone.as_deref()),
    };
    format!(
        "\nNext step: ask your own questions about this database from Claude.\n\n{desktop}\
         \n  Claude Code:\n\n    claude mcp add -s user duckgate -- {code}\n",
    )
}

/// The container's next steps: where the paths are, the Claude Desktop entry, and the
/// arguments after `claude mcp add … --`.
fn container_steps(
    db: &Path,
    mounted_folder: Option<&Path>,
    time_zone: Option<&str>,
) -> (String, String) {
    let zone = time_zone.unwrap_or("UTC");
    let zone_note = if time_zone.is_some() {
        String::new()
    } else {
        " This container got no TZ, so the entry says UTC: put your own zone there (e.g. \
         Europe/Berlin), or \"today\" will be UTC's."
            .to_string()
    };
    let file_name = db
        .file_name()
        .map_or_else(|| "cgm.duckdb".into(), |name| name.to_string_lossy());
    let host_folder = "/Users/me/health";
    let (where_it_is, folder, db_in_container) = match mounted_folder {
        Some(folder) => (
            format!(
                "  These paths are inside the container: {} is in {}, the folder you mounted \
                 there.",
                db.display(),
                folder.display()
            ),
            folder.to_path_buf(),
            db.to_path_buf(),
        ),
        // Nothing to point an entry at: say so, and show the entry for the place it belongs.
        None => (
            format!(
                "  These paths are inside a container, and {} is on the container's own file \
                 system, not in a folder you mounted: it goes when the container is removed, and \
                 no other container sees it. Write it into a mounted folder instead (for example \
                 -v {host_folder}:{CONTAINER_FOLDER}, then --out {CONTAINER_FOLDER}/{file_name}); \
                 the entry for that is below.",
                db.display()
            ),
            PathBuf::from(CONTAINER_FOLDER),
            Path::new(CONTAINER_FOLDER).join(&*file_name),
        ),
    };
    let args = container_args(
        zone,
        host_folder,
        &folder.to_string_lossy(),
        &db_in_container.to_string_lossy(),
    );
    let desktop = format!(
        "{where_it_is} In the entry below, put that folder's path on your computer where it says \
         {host_folder} (on Windows, for example C:\\Users\\me\\health, each backslash doubled as JSON \
         wants), keep :{folder}:ro, and add it to \
         Claude Desktop's claude_desktop_config.json ({CLAUDE_DESKTOP_CONFIG_MACOS} on macOS, \
         {CLAUDE_DESKTOP_CONFIG} on Windows); with Podman, the command is podman.{zone_note}\n\n{}",
        indent(&container_desktop_entry("docker", &args)),
        folder = folder.display(),
    );
    let code = std::iter::once("docker".to_string())
        .chain(args.iter().map(|arg| shell_word(arg)))
        .collect::<Vec<String>>()
        .join(" ");
    (desktop, code)
}

/// The arguments of the container route's `docker run`: a fresh container per session
/// (`--rm`) reading stdin (`-i`), with an init process as PID 1 (`--init`), no network, the
/// person's time zone, their folder mounted read-only (the folder, not the file, so the
/// database's write-ahead log comes along), and `serve` on the database in it.
pub fn container_args(
    time_zone: &str,
    host_folder: &str,
    container_folder: &str,
    db: &str,
) -> Vec<String> {
    [
        "run",
        "-i",
        "--rm",
        "--init",
        "--network",
        "none",
        "-e",
        &format!("TZ={time_zone}"),
        "-v",
        &format!("{host_folder}:{container_folder}:ro"),
        IMAGE,
        "serve",
        "--db",
        db,
    ]
    .iter()
    .map(|arg| arg.to_string())
    .collect()
}

/// Claude Desktop's entry that runs `command` (`docker`, `podman`) with `args`, written out
/// rather than serialised to keep the order a reader expects (command first); the strings are
/// JSON-escaped. The README's container entries are this text.
pub fn container_desktop_entry(command: &str, args: &[String]) -> String {
    let args: Vec<String> = args.iter().map(|arg| json_string(arg)).collect();
    format!(
        "{{\n  \"mcpServers\": {{\n    \"duckgate\": {{\n      \"command\": {},\n      \"args\": \
         [{}]\n    }}\n  }}\n}}\n",
        json_string(command),
        args.join(", ")
    )
}

/// Claude Desktop's entry on Windows: `wsl.exe -d DISTRIBUTION -- EXE serve --db DB`, written out
/// rather than serialised to keep the order a reader expects (command first); the strings are
/// JSON-escaped.
pub fn wsl_desktop_entry(distribution: &str, exe: &str, db: &str) -> String {
    format!(
        "{{\n  \"mcpServers\": {{\n    \"duckgate\": {{\n      \"command\": \"wsl.exe\",\n      \
         \"args\": [\"-d\", {}, \"--\", {}, \"serve\", \"--db\", {}]\n    }}\n  }}\n}}\n",
        json_string(distribution),
        json_string(exe),
        json_string(db),
    )
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// Every line indented by four spaces (the entries inside the next steps' text).
fn indent(text: &str) -> String {
    text.lines().map(|line| format!("    {line}\n")).collect()
}

/// `text` as one word of a POSIX shell command line: as is when that is safe, else in single
/// quotes.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@%,".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mounted_folder_is_the_deepest_mount_point_holding_the_database() {
        let mountinfo = "\
1 0 0:1 / / rw - overlay overlay rw
2 1 0:2 / /data rw - ext4 /dev/sda rw
3 2 0:3 / /data/deeper rw - ext4 /dev/sdb rw
4 1 0:4 / /datab rw - ext4 /dev/sdc rw
";
        assert_eq!(
            mounted_folder(mountinfo, Path::new("/data/cgm.duckdb")),
            Some(PathBuf::from("/data"))
        );
        assert_eq!(
            mounted_folder(mountinfo, Path::new("/data/deeper/cgm.duckdb")),
            Some(PathBuf::from("/data/deeper"))
        );
        // Path components, not text: /datab does not hold /data's files.
        assert_eq!(
            mounted_folder(mountinfo, Path::new("/home/x/cgm.duckdb")),
            None
        );
    }

    #[test]
    fn the_container_entry_is_valid_json_with_the_arguments_in_order() {
        let args = container_args(
            "Europe/Berlin",
            r"C:\Users\me\health",
            "/data",
            "/data/cgm.duckdb",
        );
        let entry: serde_json::Value =
            serde_json::from_str(&container_desktop_entry("docker", &args)).unwrap();
        let server = &entry["mcpServers"]["duckgate"];
        assert_eq!(server["command"], "docker");
        assert_eq!(
            server["args"],
            serde_json::json!([
                "run",
                "-i",
                "--rm",
                "--init",
                "--network",
                "none",
                "-e",
                "TZ=Europe/Berlin",
                "-v",
                r"C:\Users\me\health:/data:ro",
                "duckgate",
                "serve",
                "--db",
                "/data/cgm.duckdb"
            ])
        );
    }

    #[test]
    fn in_a_container_the_next_steps_say_the_paths_are_the_containers() {
        let host = Host::Container {
            mounted_folder: Some(PathBuf::from("/data")),
            time_zone: Some("America/Chicago".into()),
        };
        let text = next_steps(
            Path::new("/usr/local/bin/duckgate"),
            Path::new("/data/demo.duckdb"),
            &host,
        );
        assert!(
            text.contains("These paths are inside the container"),
            "{text}"
        );
        assert!(text.contains("\"TZ=America/Chicago\""), "{text}");
        assert!(text.contains("\"/Users/me/health:/data:ro\""), "{text}");
        assert!(
            text.contains(
                "claude mcp add -s user duckgate -- docker run -i --rm --init --network none \
                 -e TZ=America/Chicago -v /Users/me/health:/data:ro duckgate serve --db \
                 /data/demo.duckdb"
            ),
            "{text}"
        );
        // The binary's path inside the container is of no use outside it.
        assert!(!text.contains("/usr/local/bin/duckgate"), "{text}");

        let unmounted = Host::Container {
            mounted_folder: None,
            time_zone: None,
        };
        let text = next_steps(
            Path::new("/usr/local/bin/duckgate"),
            Path::new("/home/duckgate/demo.duckdb"),
            &unmounted,
        );
        assert!(text.contains("not in a folder you mounted"), "{text}");
    }

    #[test]
    fn the_next_step_quotes_paths_for_the_shell_and_escapes_them_for_json() {
        let text = next_steps(
            Path::new("/opt/duck gate/duckgate"),
            Path::new("/home/me/it's.duckdb"),
            &Host::Wsl {
                distribution: "Ubuntu-24.04".into(),
            },
        );
        assert!(
            text.trim_end().ends_with(
                r"claude mcp add -s user duckgate -- '/opt/duck gate/duckgate' serve --db '/home/me/it'\''s.duckdb'"
            ),
            "{text}"
        );
        assert!(text.contains(CLAUDE_DESKTOP_CONFIG), "{text}");
        let start = text.find('{').unwrap();
        let end = text.rfind('}').unwrap();
        let desktop: serde_json::Value = serde_json::from_str(&text[start..=end]).unwrap();
        assert_eq!(
            desktop["mcpServers"]["duckgate"],
            serde_json::json!({ "command": "wsl.exe",
                    "args": ["-d", "Ubuntu-24.04", "--", "/opt/duck gate/duckgate", "serve", "--db", "/home/me/it's.duckdb"] })
        );
        let plain = next_steps(
            Path::new("/usr/bin/duckgate"),
            Path::new("/d/x.duckdb"),
            &Host::Linux,
        );
        assert!(
            plain.contains(
                "claude mcp add -s user duckgate -- /usr/bin/duckgate serve --db /d/x.duckdb\n"
            ),
            "{plain}"
        );
        assert!(
            plain.contains("On macOS (and on Windows without WSL), run duckgate in a container"),
            "{plain}"
        );
        assert!(!plain.contains("mcpServers"), "{plain}");
    }
}
