//! The container route (README, "Claude Desktop on macOS and Windows, through a container"), as
//! far as it can be shown without a container runtime; `devtools/container/check.sh` (CI's
//! `container` stage) runs it in podman for real.
//!
//! - the README's `claude_desktop_config.json` entries are what `duckgate::mcp::next_steps`
//!   writes, and the two Containerfiles share one runtime stage;
//! - duckgate is a good PID 1: SIGTERM and SIGINT end its workers and its temporary directory,
//!   and it exits with 128 + the signal's number (as PID 1 the kernel applies no default action,
//!   so without its own handling it would not stop at all);
//! - every error names the real cause: a folder it cannot enter is not a missing database, and
//!   landlock failing under a seccomp filter it inherited (a container's profile) names the
//!   filter;
//! - in a container, `demo` says that the paths it prints are the container's.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use duckgate::mcp::next_steps::{CONTAINER_FOLDER, container_args, container_desktop_entry};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::{
    TempDir, cgm_db, descendants, duckgate_cli, exe, is_dead, run_cli, stderr_of, stdout_of,
    template_of, wait_until, workers_of,
};

fn repository_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The JSON block after `<!-- container-entry: NAME -->` in the README, as written.
fn readme_entry(readme: &str, name: &str) -> String {
    let marker = format!("<!-- container-entry: {name} -->");
    let at = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("no {marker} in the README"));
    let start = at + readme[at..].find("```json\n").expect("a JSON block") + "```json\n".len();
    let end = start + readme[start..].find("```").expect("the block's end");
    readme[start..end].to_string()
}

#[test]
fn the_readme_container_entries_are_the_ones_duckgate_writes() {
    let readme = repository_file("README.md");
    for name in ["macos", "windows"] {
        let block = readme_entry(&readme, name);
        let entry: serde_json::Value =
            serde_json::from_str(&block).unwrap_or_else(|e| panic!("{name}: {e}\n{block}"));
        let args: Vec<&str> = entry["mcpServers"]["duckgate"]["args"]
            .as_array()
            .expect("args")
            .iter()
            .map(|arg| arg.as_str().expect("a string"))
            .collect();
        let time_zone = args
            .iter()
            .find_map(|arg| arg.strip_prefix("TZ="))
            .expect("a TZ");
        let volume = args
            .iter()
            .find(|arg| arg.ends_with(&format!(":{CONTAINER_FOLDER}:ro")))
            .expect("the folder, mounted read-only");
        let host_folder = &volume[..volume.len() - format!(":{CONTAINER_FOLDER}:ro").len()];
        let expected = container_desktop_entry(
            "docker",
            &container_args(
                time_zone,
                host_folder,
                CONTAINER_FOLDER,
                &format!("{CONTAINER_FOLDER}/cgm.duckdb"),
            ),
        );
        assert_eq!(block, expected, "the README's {name} entry");
    }
    assert!(readme_entry(&readme, "macos").contains("\"/Users/me/health:/data:ro\""));
    assert!(readme_entry(&readme, "windows").contains(r#""C:\\Users\\me\\health:/data:ro""#));
}

/// The runtime stage of a Containerfile: its lines from the last `FROM`.
fn runtime_stage(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let from = lines
        .iter()
        .rposition(|line| line.starts_with("FROM "))
        .expect("a FROM line");
    lines[from..].to_vec()
}

#[test]
fn both_containerfiles_build_one_runtime_stage_that_runs_duckgate_as_a_user() {
    let source = repository_file("Containerfile");
    let binary = repository_file("Containerfile.binary");
    let (from_source, from_binary) = (runtime_stage(&source), runtime_stage(&binary));
    assert_eq!(from_source.len(), from_binary.len());
    let differing: Vec<(&str, &str)> = from_source
        .iter()
        .zip(&from_binary)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| (*a, *b))
        .collect();
    assert_eq!(
        differing,
        [(
            "COPY --from=build /out/duckgate /usr/local/bin/duckgate",
            "COPY duckgate /usr/local/bin/duckgate"
        )],
        "the runtime stages may differ only in where the binary comes from"
    );
    assert_eq!(from_binary[0], "FROM ${RUNTIME_IMAGE}");
    for line in [
        "USER 10001:10001",
        r#"ENTRYPOINT ["duckgate"]"#,
        r#"CMD ["serve"]"#,
    ] {
        assert!(from_binary.contains(&line), "no {line}");
    }
    // The build stage builds what users run: the shipped binary, from the lock file.
    assert!(source.contains("cargo build --release --locked --bin duckgate"));
    // No platform is pinned: the image is built for the machine that builds it.
    assert!(!source.contains("--platform") && !binary.contains("--platform"));
}

/// `serve` with its stdin open, answering `initialize`, then the signal: the exit status, and
/// whether the workers and the server's temporary directory are gone.
async fn stop_with(signal: nix::sys::signal::Signal) -> (Option<i32>, Vec<u32>, Vec<PathBuf>) {
    let (dir, db) = cgm_db(&format!("stop-{signal}"));
    let temp = dir.path().join("spill");
    let mut server = tokio::process::Command::new(exe())
        .args(["serve", "--db"])
        .arg(&db)
        .arg("--temp-dir")
        .arg(&temp)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = server.id().unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap()).lines();
    stdin
        .write_all(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
"#,
        )
        .await
        .unwrap();
    let reply = stdout.next_line().await.unwrap().unwrap();
    assert!(reply.contains("\"serverInfo\""), "{reply}");
    // Its template and a spare are up: there is something to end.
    wait_until(Duration::from_secs(30), || {
        template_of(pid).is_some() && !workers_of(pid).is_empty()
    })
    .await
    .expect("the template and a spare start");
    let workers = descendants(pid);
    let server_dirs = || -> Vec<PathBuf> {
        std::fs::read_dir(&temp)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with("server-"))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    assert!(!server_dirs().is_empty(), "the server made its directory");

    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
    // stdin stays open: the signal alone must end it.
    let status = tokio::time::timeout(Duration::from_secs(20), server.wait())
        .await
        .expect("the server exits after the signal")
        .unwrap();
    drop(stdin);
    wait_until(Duration::from_secs(10), || {
        workers.iter().all(|w| is_dead(*w))
    })
    .await
    .expect("its workers and template end with it");
    let left: Vec<u32> = workers.into_iter().filter(|w| !is_dead(*w)).collect();
    (status.code(), left, server_dirs())
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_ends_the_workers_and_the_temporary_directory_and_exits_143() {
    let (code, left, dirs) = stop_with(nix::sys::signal::Signal::SIGTERM).await;
    // A handled stop: an exit code, not death by the signal (which the default action would
    // give, and which PID 1 never gets).
    assert_eq!(code, Some(143));
    assert!(left.is_empty(), "{left:?}");
    assert!(dirs.is_empty(), "left behind: {dirs:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigint_ends_the_workers_and_the_temporary_directory_and_exits_130() {
    let (code, left, dirs) = stop_with(nix::sys::signal::Signal::SIGINT).await;
    assert_eq!(code, Some(130));
    assert!(left.is_empty(), "{left:?}");
    assert!(dirs.is_empty(), "left behind: {dirs:?}");
}

/// `duckgate check-sandbox`, started from a thread that first installs a seccomp filter making
/// `landlock_create_ruleset` fail with `errno` (a container runtime's profile without landlock:
/// Podman's answer ENOSYS, Docker's EPERM). The filter binds that thread and what it starts,
/// never the rest of the test binary.
fn check_sandbox_under_a_filter_refusing_landlock(errno: i32) -> std::process::Output {
    use seccompiler::{SeccompAction, SeccompFilter, TargetArch};
    std::thread::spawn(move || {
        let rules: std::collections::BTreeMap<i64, Vec<seccompiler::SeccompRule>> =
            [(nix::libc::SYS_landlock_create_ruleset, Vec::new())]
                .into_iter()
                .collect();
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            TargetArch::try_from(std::env::consts::ARCH).unwrap(),
        )
        .unwrap();
        let program: seccompiler::BpfProgram = filter.try_into().unwrap();
        seccompiler::apply_filter(&program).unwrap();
        run_cli(duckgate_cli(["check-sandbox"]), None)
    })
    .join()
    .unwrap()
}

#[test]
fn a_seccomp_profile_refusing_landlock_is_named_as_the_cause_not_the_kernel() {
    for errno in [nix::libc::ENOSYS, nix::libc::EPERM] {
        let output = check_sandbox_under_a_filter_refusing_landlock(errno);
        let stdout = stdout_of(&output);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{stdout}{}",
            stderr_of(&output)
        );
        assert!(
            stdout.contains(
                "seccomp filter(s) it inherited, on a kernel new enough for landlock: \
                             most likely that filter (a container runtime's seccomp profile"
            ),
            "errno {errno}: {stdout}"
        );
        assert!(
            stdout.contains(duckgate::sandbox::preflight::FIX_INHERITED_FILTER),
            "{stdout}"
        );
        assert!(
            !stdout.contains("the kernel does not implement landlock"),
            "{stdout}"
        );
    }
}

/// `duckgate query` on a database in a folder it may not enter: as root (which enters any
/// folder) it runs as `nobody` from a copy of the binary that user may run; as anyone else, the
/// folder is made 0000.
#[test]
fn a_database_in_a_folder_this_user_cannot_enter_is_named_not_called_missing() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = TempDir::in_system_temp("unreadable-folder");
    let locked = dir.path().join("health");
    std::fs::create_dir(&locked).unwrap();
    crate::support::make_db(&locked.join("cgm.duckdb"), "CREATE TABLE t (x INTEGER)");
    let db = locked.join("cgm.duckdb");
    let root = nix::unistd::geteuid().is_root();
    let mut command = if root {
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
        let copy = dir.path().join("duckgate");
        std::fs::copy(exe(), &copy).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut command = std::process::Command::new(copy);
        command.uid(65534).gid(65534).env("HOME", "/nonexistent");
        command
    } else {
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        std::process::Command::new(exe())
    };
    // No spilling: no temporary directory of `nobody`'s is left in /tmp.
    command
        .args(["query", "--max-temp-size", "0", "--db"])
        .arg(&db)
        .arg("SELECT 1");
    let output = run_cli(command, None);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    let stdout = stdout_of(&output);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{stdout}{}",
        stderr_of(&output)
    );
    assert!(
        stdout.contains(&format!(
            "database_error: duckgate cannot read the database {}: the folder {} is not open to \
             this process",
            db.display(),
            locked.display()
        )),
        "{stdout}"
    );
    assert!(stdout.contains("Permission denied"), "{stdout}");
    assert!(!stdout.contains("No database file"), "{stdout}");
}

#[test]
fn in_a_container_demo_says_its_paths_are_the_containers() {
    let dir = TempDir::new("demo-container");
    let db = dir.path().join("demo.duckdb");
    let mut command = duckgate_cli(["demo", "--out"]);
    command
        .arg(&db)
        .env("container", "oci")
        .env("TZ", "America/Chicago");
    let output = run_cli(command, None);
    let stdout = stdout_of(&output);
    assert!(output.status.success(), "{stdout}{}", stderr_of(&output));
    assert!(stdout.contains("These paths are inside"), "{stdout}");
    // The binary inside a container is no use to a client outside it.
    let binary = std::fs::canonicalize(exe()).unwrap();
    assert!(
        !stdout.contains(&format!("{} serve", binary.display())),
        "{stdout}"
    );
    let last = stdout.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.trim().starts_with(
            "claude mcp add -s user duckgate -- docker run -i --rm --init --network none -e \
             TZ=America/Chicago -v /Users/me/health:"
        ),
        "{last}"
    );
}
