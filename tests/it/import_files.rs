//! `duckgate import` reads exactly the files it was given, through the real binary: a name with
//! glob characters is that file and no other (`[s]ecret.csv`, a file named `**`); a symbolic
//! link out of a given folder and a FIFO are never read, and nothing of what lies outside
//! reaches the database or the report; an Apple Health export with a 120 MB attribute, a
//! 120 MB text node or a DOCTYPE that never closes is read within the stated memory bound; and
//! the report prints every file name and value with its control characters escaped.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::import_vendors::{Expected, clarity_csv, import, rows, write};
use crate::support::{TempDir, exe, serve_whole};

/// Everything the agent can read of a database, as one lower-case text.
async fn everything(db: &Path) -> String {
    let client = serve_whole(db, &[]).await;
    let mut all =
        serde_json::to_string(&client.call("list_tables", json!({})).await.unwrap()).unwrap();
    let names = rows(
        &client,
        "SELECT table_name FROM duckdb_tables() UNION ALL SELECT view_name FROM duckdb_views() \
         WHERE NOT internal",
    )
    .await;
    for name in names {
        let name = name[0].as_str().unwrap().to_string();
        let got = rows(&client, &format!("SELECT * FROM \"{name}\"")).await;
        all.push_str(&serde_json::to_string(&got).unwrap());
    }
    client.close().await.unwrap();
    all.to_lowercase()
}

/// A name with glob characters is that one file: `exports/[s]ecret.csv` is not
/// `exports/secret.csv`, a missing `[t]est.csv` is not `test.csv`, and a file named `**` (or
/// `*.csv`) in a folder is one file, not the files of its subfolders.
#[tokio::test(flavor = "multi_thread")]
async fn names_with_glob_characters_are_the_files_they_name() {
    let dir = TempDir::new("import-literal");
    let exports = dir.path().join("exports");
    std::fs::create_dir(&exports).unwrap();
    write(
        &exports,
        "secret.csv",
        "label,value\nsecret,SECRET-OUTSIDE-A\n",
    );
    let literal = write(
        &exports,
        "[s]ecret.csv",
        "label,value\nliteral,LITERAL-INSIDE\n",
    );
    let out = dir.path().join("literal.duckdb");
    let (code, said, err) = import(&out, &[], &[&literal]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.contains("csv_label_value +1"), "{said}");
    let all = everything(&out).await;
    assert!(all.contains("literal-inside"), "{all}");
    assert!(!all.contains("secret-outside"), "{all}");
    assert!(!said.to_lowercase().contains("secret-outside"), "{said}");

    write(&exports, "test.csv", "label,value\ntest,SECRET-OUTSIDE-B\n");
    let missing = exports.join("[t]est.csv");
    let nothing = dir.path().join("nothing.duckdb");
    let (code, said, err) = import(&nothing, &[], &[&missing]);
    assert_eq!(code, 2, "{said}{err}");
    assert!(
        err.contains("cannot read") && err.contains("[t]est.csv"),
        "{err}"
    );
    assert!(!nothing.exists());

    // A file named `**` holding a Clarity export (recognised by its content, not its name),
    // beside subfolders holding other exports: only the `**` file's readings are imported.
    let folder = dir.path().join("folder");
    std::fs::create_dir_all(folder.join("sub").join("deeper")).unwrap();
    let (inside, readings) = clarity_csv(&["2026-06-01"], 0);
    write(&folder, "**", &inside);
    write(&folder, "*.csv", "label,value\nstar,STAR-CSV-INSIDE\n");
    let (outside, _) = clarity_csv(&["2026-07-01"], 9);
    write(&folder.join("sub"), "a.csv", &outside);
    write(&folder.join("sub"), "**", &outside);
    write(
        &folder.join("sub").join("deeper"),
        "b.csv",
        "label,value\ndeep,DEEP-OUTSIDE\n",
    );
    let stars = dir.path().join("stars.duckdb");
    let (code, said, err) = import(&stars, &[], &[&folder]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.contains("**: Dexcom Clarity CSV"), "{said}");
    let all = everything(&stars).await;
    assert!(all.contains("star-csv-inside"), "{all}");
    assert!(!all.contains("deep-outside"), "{all}");
    assert!(!said.to_lowercase().contains("deep-outside"), "{said}");
    let client = serve_whole(&stars, &[]).await;
    let days = rows(
        &client,
        "SELECT list(DISTINCT ts::DATE::VARCHAR), count(*) FROM cgm_readings",
    )
    .await;
    assert_eq!(days, vec![json!([["2026-06-01"], readings.len()])]);
    client.close().await.unwrap();
}

/// Run a command, killing it if it has not ended within `limit` (a FIFO opened would block
/// forever): (exit code, stdout, stderr).
fn run_within(mut command: Command, limit: Duration) -> (i32, String, String) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the import did not end within {limit:?}: it blocked on a FIFO");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// A folder with a symbolic link to a file outside it and a FIFO: the link is not followed and
/// the FIFO never opened (the import ends), the summary says so without naming what lies
/// outside, and nothing of the outside file is in the database; a link to a file inside the
/// folder is followed. A FIFO named on the command line fails without being opened.
#[tokio::test(flavor = "multi_thread")]
async fn a_link_out_of_the_folder_and_a_fifo_are_never_read() {
    let dir = TempDir::new("import-links");
    let outside = dir.path().join("private-outside");
    std::fs::create_dir(&outside).unwrap();
    let private = write(
        &outside,
        "private.csv",
        "label,value\nprivate,PRIVATE-OUTSIDE\n",
    );
    let folder = dir.path().join("downloads");
    std::fs::create_dir(&folder).unwrap();
    write(&folder, "good.csv", "label,value\ngood,GOOD-INSIDE\n");
    std::os::unix::fs::symlink(&private, folder.join("link.csv")).unwrap();
    std::os::unix::fs::symlink(
        "../private-outside/private.csv",
        folder.join("relative.csv"),
    )
    .unwrap();
    std::os::unix::fs::symlink(folder.join("good.csv"), folder.join("inner.csv")).unwrap();
    mkfifo(&folder.join("pipe.csv"));
    let out = dir.path().join("links.duckdb");
    let mut command = Command::new(exe());
    command.arg("import").arg("--out").arg(&out).arg(&folder);
    let (code, said, err) = run_within(command, Duration::from_secs(120));
    assert_eq!(code, 0, "{said}{err}");
    for needle in [
        "link.csv: skipped (a symbolic link to a file outside the folder: not followed)",
        "relative.csv: skipped (a symbolic link to a file outside the folder: not followed)",
        "pipe.csv: skipped (a FIFO (named pipe): import reads regular files only)",
        "good.csv: CSV (generic)",
        "inner.csv: CSV (generic)",
    ] {
        assert!(said.contains(needle), "{needle:?} missing from:\n{said}");
    }
    let told = format!("{said}{err}").to_lowercase();
    for outside in ["private-outside", "private.csv"] {
        assert!(!told.contains(outside), "{outside}: {told}");
    }
    let all = everything(&out).await;
    assert!(all.contains("good-inside"), "{all}");
    assert!(!all.contains("private-outside"), "{all}");

    let alone = dir.path().join("alone.duckdb");
    let mut command = Command::new(exe());
    command
        .arg("import")
        .arg("--out")
        .arg(&alone)
        .arg(folder.join("pipe.csv"));
    let (code, said, err) = run_within(command, Duration::from_secs(120));
    assert_eq!(code, 1, "{said}{err}");
    assert!(
        said.contains("pipe.csv: FAILED: it is a FIFO (named pipe): import reads regular files only and never opened it"),
        "{said}"
    );
    assert!(!alone.exists());
}

/// Bytes of a 120 MB attribute, text node or DOCTYPE.
const HUGE: usize = 120 * 1024 * 1024;

/// A small Apple Health export of CGM readings; the readings' values.
fn apple_export(extra_after_healthdata: &str) -> (String, Vec<i32>) {
    let mut text = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE HealthData [\n<!ELEMENT HealthData (Record)*>\n]>\n\
         <HealthData locale=\"en_US\">\n",
    );
    text.push_str(extra_after_healthdata);
    let mut values: Vec<i32> = Vec::new();
    for i in 0..288 {
        let v = 80 + (i * 7) % 150;
        text.push_str(&format!(
            " <Record type=\"HKQuantityTypeIdentifierBloodGlucose\" sourceName=\"Dexcom G7\" device=\"&lt;&lt;HKDevice: 0x1&gt;, name:CGM, manufacturer:Dexcom, model:G7&gt;\" unit=\"mg/dL\" startDate=\"2026-06-01 {:02}:{:02}:00 +0200\" endDate=\"2026-06-01 {:02}:{:02}:00 +0200\" value=\"{v}\"/>\n",
            i / 12,
            i % 12 * 5,
            i / 12,
            i % 12 * 5
        ));
        values.push(v);
    }
    text.push_str("</HealthData>\n");
    (text, values)
}

/// Write `head`, then `filler` repeated to `size` bytes, then `tail`, without holding it all.
fn write_huge(path: &Path, head: &str, filler: &[u8], size: usize, tail: &str) {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    file.write_all(head.as_bytes()).unwrap();
    let chunk: Vec<u8> = filler.iter().copied().cycle().take(1 << 20).collect();
    let mut written = 0;
    while written < size {
        let n = chunk.len().min(size - written);
        file.write_all(&chunk[..n]).unwrap();
        written += n;
    }
    file.write_all(tail.as_bytes()).unwrap();
    file.flush().unwrap();
}

/// `duckgate import --out OUT FILE` run by a Python parent that reports its child's peak
/// resident memory (`getrusage(RUSAGE_CHILDREN).ru_maxrss`, KiB): (exit code, stdout, peak KiB).
fn import_measured(out: &Path, file: &Path) -> (i32, String, u64) {
    let script = "import resource, subprocess, sys\n\
        r = subprocess.run(sys.argv[1:], capture_output=True)\n\
        sys.stdout.buffer.write(r.stdout)\n\
        sys.stderr.buffer.write(r.stderr)\n\
        print('PEAK_KIB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n\
        sys.exit(r.returncode)\n";
    let output = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(exe())
        .arg("import")
        .arg("--out")
        .arg(out)
        .arg(file)
        .output()
        .expect("python3 runs (the build needs it too)");
    let err = String::from_utf8_lossy(&output.stderr);
    let peak = err
        .lines()
        .find_map(|l| l.strip_prefix("PEAK_KIB "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak reported: {err}"));
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned() + &err,
        peak,
    )
}

/// The stated bound (docs/ARCHITECTURE.md, "Import"): a tag, a text node or a DOCTYPE of any
/// length adds at most this much to the import's peak resident memory over the same export
/// without it (the scanner holds one 64 KiB tag and a 64 KiB read buffer).
const TAG_BOUND_KIB: u64 = 16 * 1024;

/// Apple Health exports with a 120 MB attribute, a 120 MB text node and a 120 MB DOCTYPE that
/// never closes are read within the stated bound over the same export without them, and the
/// records around the first two are still imported.
#[tokio::test(flavor = "multi_thread")]
async fn an_apple_health_tag_of_120_mb_stays_within_the_memory_bound() {
    let dir = TempDir::new("import-apple-bound");
    let (plain, values) = apple_export("");
    let base_file = write(dir.path(), "export.xml", &plain);
    let (code, said, base_peak) = import_measured(&dir.path().join("base.duckdb"), &base_file);
    assert_eq!(code, 0, "{said}");
    eprintln!("the export without a huge tag: peak {base_peak} KiB");
    let expected = Expected::of(values.iter().copied());

    let (head, tail) = plain.split_at(plain.find(" <Record").unwrap());
    let cases: [(&str, String, &[u8], String, bool); 3] = [
        (
            "a 120 MB attribute",
            format!("{head} <Record type=\"HKQuantityTypeIdentifierBloodGlucose\" note=\""),
            b"abcdefgh",
            format!("\" value=\"5\"/>\n{tail}"),
            true,
        ),
        (
            "a 120 MB text node",
            format!("{head} <Note>"),
            b"lorem ipsum ",
            format!("</Note>\n{tail}"),
            true,
        ),
        (
            "a DOCTYPE that never closes",
            "<?xml version=\"1.0\"?>\n<!DOCTYPE HealthData [\n<HealthData>".to_string(),
            b"<!ELEMENT Record (MetadataEntry)*>\n",
            String::new(),
            false,
        ),
    ];
    for (what, before, filler, after, imports) in cases {
        let file = dir.path().join("huge.xml");
        write_huge(&file, &before, filler, HUGE, &after);
        let out = dir
            .path()
            .join(format!("{}.duckdb", what.replace(' ', "-")));
        let (code, said, peak) = import_measured(&out, &file);
        eprintln!("{what}: peak {peak} KiB");
        assert!(
            peak <= base_peak + TAG_BOUND_KIB,
            "{what}: peak {peak} KiB, over {base_peak} KiB + {TAG_BOUND_KIB} KiB"
        );
        if imports {
            assert_eq!(code, 0, "{what}: {said}");
            let client = serve_whole(&out, &[]).await;
            let got = rows(
                &client,
                "SELECT count(*), count(*) FILTER (WHERE glucose_mg_dl < 54), \
                 count(*) FILTER (WHERE glucose_mg_dl > 250), avg(glucose_mg_dl)::DOUBLE FROM cgm_readings",
            )
            .await;
            assert_eq!(
                got,
                vec![json!([
                    expected.readings,
                    expected.below_54,
                    expected.above_250,
                    expected.mean()
                ])],
                "{what}"
            );
            client.close().await.unwrap();
        } else {
            assert_eq!(code, 1, "{what}: {said}");
            assert!(
                said.contains("no blood glucose, insulin or carbohydrate records"),
                "{said}"
            );
        }
        std::fs::remove_file(&file).unwrap();
    }
}

/// File names, column names and values with terminal escapes (colour, bell, title, clear
/// screen) are printed escaped in every line of the report, on stdout and stderr alike.
#[test]
fn the_import_report_escapes_control_characters() {
    let dir = TempDir::new("import-escapes");
    let folder = dir.path().join("downloads");
    std::fs::create_dir(&folder).unwrap();
    write(&folder, "\u{1b}[31mred\u{7}.csv", "a\u{1b}[5m,b\n1,2\n");
    let (clarity, _) = clarity_csv(&["2026-06-01"], 0);
    write(
        &folder,
        "ok\u{1b}]0;pwned\u{7}.csv",
        &clarity.replace(",???,", ",\u{1b}[2J,"),
    );
    write(
        &folder,
        "\u{1b}[1mbroken\u{9b}.csv",
        "Glucose Data,Generated on,10-28-2026 09:15 UTC,Generated by,X\nDevice,Serial Number,\
         Device Timestamp,Record Type,Historic Glucose mg/dL,Scan Glucose mg/dL,a,b,c,d,e,f,g,\
         Notes\nFreeStyle Libre 3,1,10-24-2026 00:00,0,100,,,,,,,,,\"never \u{1b}[0m closed\n",
    );
    let out = dir.path().join("escapes.duckdb");
    let (code, said, err) = import(&out, &[], &[&folder]);
    assert_eq!(code, 1, "{said}{err}");
    for (stream, text) in [("stdout", &said), ("stderr", &err)] {
        for raw in ['\u{1b}', '\u{7}', '\u{9b}'] {
            assert!(
                !text.contains(raw),
                "{stream} holds a raw {:?}:\n{text}",
                raw
            );
        }
    }
    for escaped in [
        "\\u{1b}[31mred\\u{7}.csv: CSV (generic)",
        "ok\\u{1b}]0;pwned\\u{7}.csv: Dexcom Clarity CSV",
        "Glucose Value (mg/dL) \"\\u{1b}[2J\"",
        "\\u{1b}[1mbroken\\u{9b}.csv: FAILED: it is not valid CSV",
        "a\\u{1b}[5m BIGINT",
    ] {
        assert!(said.contains(escaped), "{escaped:?} missing from:\n{said}");
    }
}
