//! DuckDB's complete source tree for the `bundled-cmake` build, taken from the `duckdb` source
//! distribution on PyPI.
//!
//! The crates.io package of libduckdb-sys carries only the sources of the `cc` build (no CMake
//! files, no ICU), and its `bundled-cmake` build expects a git checkout. The PyPI sdist of the
//! same DuckDB release holds the whole tree under `external/duckdb`, ICU included.
//!
//! Steps, each failing the build with the reason:
//! 1. A tree published earlier under the shared sources root (`<target>/duckdb-sources`, see
//!    `build_paths`) is used as it is: it is only ever published complete.
//! 2. Otherwise the sdist is taken from `DUCKDB_SDIST` (a local file, for offline builds), or
//!    from the cache beside the tree, or fetched with `python3 -m pip download`, which checks
//!    the pinned hash before it unpacks anything.
//! 3. Its SHA-256 is checked here again, whatever its origin.
//! 4. Only `external/duckdb/` is unpacked, into a staging directory that is renamed into place.
//!
//! The tree lives outside `OUT_DIR` so every checkout built into the same target directory
//! shares one tree (and one CMake build, see `build_bundled_cmake`).

use sha2::{Digest, Sha256};
use std::{
    env, fs, io,
    path::{Path, PathBuf},
    process::Command,
};

/// The pip requirement that names the sdist.
const REQUIREMENT: &str = "duckdb==2.0.0";
/// The file pip saves.
const SDIST_FILE: &str = "duckdb-2.0.0.tar.gz";
/// SHA-256 of `SDIST_FILE` as published on PyPI.
const SDIST_SHA256: &str = "09de511ef0dc76a5213e8d3d87a8b89bb4d3e8a6fe73a9f60dc001269946b44f";
/// DuckDB's tree inside the sdist.
const TREE_IN_SDIST: &str = "duckdb-2.0.0/external/duckdb";
/// Written last into a complete tree.
const COMPLETE: &str = ".complete";

/// The directory holding DuckDB's `CMakeLists.txt`, fetched and unpacked if needed.
pub(crate) fn locate(out_dir: &Path) -> PathBuf {
    println!("cargo:rerun-if-env-changed=DUCKDB_SDIST");
    let root = crate::build_paths::sources_root(&crate::build_paths::real_out_dir(out_dir))
        .unwrap_or_else(|| out_dir.join("duckdb-sources"));
    let tree = root.join(format!("duckdb-2.0.0-sdist-{}", &SDIST_SHA256[..12]));
    if tree.join(COMPLETE).is_file() {
        return tree;
    }
    fs::create_dir_all(&root).unwrap_or_else(|err| panic!("creating {}: {err}", root.display()));
    let sdist = sdist(&root);
    let bytes = fs::read(&sdist).unwrap_or_else(|err| panic!("reading {}: {err}", sdist.display()));
    let digest: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    if digest != SDIST_SHA256 {
        panic!(
            "{} has SHA-256 {digest}, expected {SDIST_SHA256}: not the DuckDB 2.0.0 sdist this build pins",
            sdist.display()
        );
    }
    unpack(&bytes, &root, &tree).unwrap_or_else(|err| panic!("unpacking {}: {err}", sdist.display()));
    tree
}

/// The sdist file: `DUCKDB_SDIST`, the cached copy, or a fresh download.
fn sdist(root: &Path) -> PathBuf {
    if let Some(path) = env::var_os("DUCKDB_SDIST") {
        return PathBuf::from(path);
    }
    let cached = root.join(SDIST_FILE);
    if cached.is_file() {
        return cached;
    }
    let download = root.join(".pip-download");
    let _ = fs::remove_dir_all(&download);
    fs::create_dir_all(&download).unwrap_or_else(|err| panic!("creating {}: {err}", download.display()));
    // `--require-hashes` makes pip check the file before it runs the sdist's build backend
    // (which it does to read the metadata).
    let requirements = download.join("requirements.txt");
    fs::write(&requirements, format!("{REQUIREMENT} --hash=sha256:{SDIST_SHA256}\n"))
        .unwrap_or_else(|err| panic!("writing {}: {err}", requirements.display()));
    let python = env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    println!("cargo:rerun-if-env-changed=PYTHON");
    let status = Command::new(&python)
        .args(["-m", "pip", "download", "--no-deps", "--no-binary", "duckdb", "--require-hashes", "-r"])
        .arg(&requirements)
        .arg("-d")
        .arg(&download)
        .status()
        .unwrap_or_else(|err| {
            panic!(
                "running `{python} -m pip download` to fetch DuckDB's sources ({REQUIREMENT}) failed: {err}. \
                 Install Python 3 with pip, or download {SDIST_FILE} from PyPI and set DUCKDB_SDIST to its path."
            )
        });
    if !status.success() {
        panic!(
            "`{python} -m pip download {REQUIREMENT}` failed ({status}). Download {SDIST_FILE} from PyPI and set \
             DUCKDB_SDIST to its path for an offline build."
        );
    }
    fs::rename(download.join(SDIST_FILE), &cached)
        .unwrap_or_else(|err| panic!("moving the downloaded {SDIST_FILE} to {}: {err}", cached.display()));
    let _ = fs::remove_dir_all(&download);
    cached
}

/// Unpacks `TREE_IN_SDIST` of the sdist into `tree`, atomically.
fn unpack(sdist: &[u8], root: &Path, tree: &Path) -> io::Result<()> {
    let staging = root.join(format!(".unpack-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(&staging)?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(sdist));
    for entry in archive.entries()? {
        let mut entry = entry?;
        let path = entry.path()?.into_owned();
        let Ok(relative) = path.strip_prefix(TREE_IN_SDIST) else {
            continue;
        };
        if relative.as_os_str().is_empty() {
            continue;
        }
        // The archive is pinned by hash, but a path that climbs out (`..`, `/`) is refused anyway.
        if !relative.components().all(|c| matches!(c, std::path::Component::Normal(_))) {
            return Err(io::Error::other(format!("sdist entry {} leaves the tree", path.display())));
        }
        let target = staging.join(relative);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)?;
        }
        entry.set_preserve_mtime(true);
        entry.unpack(&target)?;
    }
    if !staging.join("CMakeLists.txt").is_file() {
        let _ = fs::remove_dir_all(&staging);
        return Err(io::Error::other(format!("the sdist has no {TREE_IN_SDIST}/CMakeLists.txt")));
    }
    fs::write(staging.join(COMPLETE), b"")?;
    match fs::rename(&staging, tree) {
        Ok(()) => Ok(()),
        // Another build published the same tree first.
        Err(_) if tree.join(COMPLETE).is_file() => {
            let _ = fs::remove_dir_all(&staging);
            Ok(())
        }
        Err(err) => Err(err),
    }
}
