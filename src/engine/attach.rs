//! A request's attach: every database read-only under its name (or, under privacy rules, each
//! under a private one beneath its shadow catalog), the default selected, the settings that must
//! hold before any query, the configuration locked; and the ways out: the file locks released,
//! or a detach.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::errors::{attach_error, not_found, worker_error};
use super::{Engine, plan_check, shadow, sql_identifier, sql_string, statement};
use crate::privacy::PrivacyPolicy;
use crate::protocol::Failure;
use crate::protocol::databases::{Database, Databases};
use duckgate_validate::error::ErrorKind;
use duckgate_validate::validate::tree::{TreeFacts, TreeRules};

use super::statement::CheckedQuery;

// One database as a request attached it: the plan policy's type (it needs no DuckDB), taken
// from there by every engine file, so no file of the engine imports another's re-export.
use crate::plan_policy::Attached;

impl Engine {
    /// Attach every database read-only, make the first the default, and lock the configuration.
    pub fn attach(&mut self) -> Result<(), Failure> {
        self.attach_checking(None).map(drop)
    }

    /// [`Engine::attach`], while DuckDB's parser checks `sql` (see [`Engine::check_statement`])
    /// on the checker thread; the checked statement when `sql` was given. An attach error is
    /// reported first (it is the operator's to fix whatever the query), then the check's.
    pub fn attach_checking(&mut self, sql: Option<&str>) -> Result<Option<CheckedQuery>, Failure> {
        let pending_check = match sql {
            Some(sql) => {
                let names = self.database_names();
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                let rules = self.tree_rules(&names);
                Some(self.checker()?.submit(sql, &rules)?)
            }
            None => None,
        };
        let attached = self.attach_now();
        let checked = match pending_check {
            Some(pending) => self.checker()?.collect(pending).map(Some),
            None => Ok(None),
        };
        attached?;
        let checked = checked?;
        if let Some(query) = &checked {
            self.refuse_files_named(query.facts())?;
        }
        Ok(checked)
    }

    /// The plan check's own reading of `sql`, for a test that switched the walk off
    /// ([`statement::parse_for_plan_check`]): the plan check then holds on its own.
    pub fn parse_for_plan_check(&self, sql: &str) -> Result<CheckedQuery, Failure> {
        let checker = self.checker()?;
        statement::parse_for_plan_check(
            self.token,
            sql,
            self.privacy.is_some(),
            !self.folder_names.is_empty(),
            |select| checker.parse(select),
        )
    }

    /// The walk's last step, once the databases are attached: a relation it found named like a
    /// file must be a table or view of a database, or binding would read the file. The walk
    /// itself runs beside the attach and cannot see the catalogs; with the plan check switched
    /// off this is what refuses such a name. Unattached, nothing can be one: refused.
    pub(super) fn refuse_files_named(&self, facts: &TreeFacts) -> Result<(), Failure> {
        let outside = if self.attached.is_empty() {
            facts
                .file_like
                .iter()
                .find(|name| !plan_check::in_declared_folder(&self.folder_names, name))
                .map(plan_check::written_name)
        } else {
            plan_check::first_file_outside(
                &self.conn,
                &self.attached,
                &self.folder_names,
                &facts.file_like,
            )?
        };
        match outside {
            Some(written) => {
                Err(duckgate_validate::validate::refusals::file_relation(&written).into())
            }
            None => Ok(()),
        }
    }

    /// The databases this worker serves, or an error when it was never made a worker.
    fn served(&self) -> Result<Databases, Failure> {
        self.databases.clone().ok_or_else(|| {
            worker_error(
                ErrorKind::InternalError,
                "This DuckDB instance serves no database (it is a template's).",
            )
        })
    }

    /// Each database's declared name, the default first (empty before `into_worker`).
    pub(super) fn database_names(&self) -> Vec<String> {
        self.databases
            .as_ref()
            .map(Databases::names)
            .unwrap_or_default()
    }

    /// Attach the database `index` (in declared order) read-only as `catalog`, through the
    /// descriptors this process opened before it confined itself (`held`): landlock grants no
    /// path of it, and its name is served only during this attach. Its file is recorded the
    /// moment the attach succeeds, so that [`Engine::release_file_lock`] lets go of every lock
    /// taken, even when a later database's attach fails.
    fn attach_one(
        &mut self,
        index: usize,
        database: &Database,
        catalog: String,
    ) -> Result<(), Failure> {
        // `stat`, which landlock does not restrict: a missing file and a directory are told
        // apart from the descriptors' side, which knows neither.
        match std::fs::metadata(&database.path) {
            Ok(meta) if meta.is_dir() => {
                return Err(worker_error(
                    ErrorKind::DatabaseError,
                    format!(
                        "The database {} is a directory, not a DuckDB file.",
                        database.name
                    ),
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(not_found(&database.name));
            }
            // Anything else (e.g. denied) is DuckDB's to report below.
            Err(_) => {}
        }
        let held = crate::protocol::databases::held_name(index);
        let attach = format!(
            "ATTACH {} AS {} (READ_ONLY)",
            sql_string(&held),
            sql_identifier(&catalog)
        );
        let serving = duckgate_plan_reader::Attaching::start(self.token).map_err(|e| {
            worker_error(
                ErrorKind::InternalError,
                format!("This worker holds no database files: {e}"),
            )
        })?;
        let attached = self.conn.execute_batch(&attach);
        drop(serving);
        attached.map_err(|e| attach_error(&e, &database.name, Path::new(&held)))?;
        self.attached.push(Attached {
            name: database.name.clone(),
            catalog,
            file: PathBuf::from(held),
        });
        Ok(())
    }

    fn attach_now(&mut self) -> Result<(), Failure> {
        self.ensure_lock_held()?;
        let started = Instant::now();
        let databases = self.served()?;
        // Under privacy rules each file goes under a private name and the binder sees only the
        // shadow catalogs under the public ones (`shadow`).
        for (index, database) in databases.iter().enumerate() {
            let catalog = match &self.privacy {
                Some(_) => shadow::private_alias()?,
                None => database.name.clone(),
            };
            self.attach_one(index, database, catalog)?;
        }
        let mut shadow = self.privacy.as_ref().map(|_| shadow::Shadow {
            catalogs: self.attached.clone(),
            view_reads: Default::default(),
        });
        self.reseed_random()?;
        // The settings that must hold before any query: global, so the checker's connection
        // sets them while this one selects the database; the query runs only once both are
        // done (`collect_configured` below), and a failure of either fails the request.
        let mut hardening = String::new();
        if self.privacy.is_some() {
            // The plan the privacy check reads must not depend on the data (see
            // `plan_check`), nor the plans the shadow traces its views' columns by (`lineage`):
            // set here, before the shadow is built, and kept for the query.
            self.conn
                .execute_batch(&format!(
                    "SET disabled_optimizers = {};",
                    sql_string(plan_check::DATA_DEPENDENT_OPTIMIZERS)
                ))
                .map_err(|e| {
                    worker_error(
                        ErrorKind::InternalError,
                        format!("Could not configure DuckDB for privacy rules: {e}"),
                    )
                })?;
        }
        if self.harden {
            // `allowed_paths` holds what ATTACH opened (DuckDB adds it anyway): the databases'
            // reserved names, whose file system refuses every write and every open outside
            // duckgate's own ATTACH (when it held host paths, `COPY … TO '<db>'
            // (USE_TMP_FILE false)` overwrote the file). Once attached, DuckDB reads through
            // handles it already holds, so without spilling the local file system can go
            // entirely (DuckDB refuses to re-enable it). Spilling needs it: DuckDB's temporary
            // files go through the same file system (measured: with it disabled, a spilling
            // DISTINCT fails with "File system LocalFileSystem has been disabled by
            // configuration"). Then the kernel grants no path of any database, and the SQL
            // checks refuse every path.
            // The parent gives a worker no spilling under privacy rules unless the operator
            // opted in (`gateway::config::spills`), so there SQL can never open a file by path.
            if !self.spills {
                hardening.push_str(" SET disabled_filesystems = 'LocalFileSystem';");
            }
            // The lock comes last: after it no setting can change (`USE` still can: DuckDB
            // always allows `schema` and `search_path`).
            hardening.push_str(" SET lock_configuration = true;");
        }
        let pending = if hardening.is_empty() {
            None
        } else {
            Some(self.checker()?.submit_configure(hardening)?)
        };
        let default = databases.default_database().name.clone();
        let selected = match (&mut shadow, &self.privacy) {
            (Some(shadow), Some(policy)) => shadow.build(&self.conn, &self.judge, policy),
            _ => self
                .conn
                .execute_batch(&format!("USE {};", sql_identifier(&default)))
                .map_err(|e| {
                    worker_error(
                        ErrorKind::InternalError,
                        format!("Could not select the default database: {e}"),
                    )
                }),
        };
        if let Some(pending) = pending {
            self.checker()?.collect_configured(pending)?;
        }
        selected?;
        self.shadow = shadow;
        self.pending_attach_ms = started.elapsed().as_secs_f64() * 1e3;
        Ok(())
    }

    /// Seed this connection's random generator from the kernel, for `random()`, `uuid()` and
    /// samples without a seed. DuckDB seeds it once, when the connection is made: in a worker
    /// forked from a template that was the template's seed, so every request drew the same
    /// values. `setseed` takes a number in [-1, 1]; 53 random bits fill its fraction.
    fn reseed_random(&self) -> Result<(), Failure> {
        let bits = u64::from_le_bytes(super::kernel_random::<8>()?) >> 11;
        let seed = bits as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        let setseed = super::own_sql::OwnSql::fixed("SELECT setseed(?)");
        super::statement::prepare_sql(
            &self.conn,
            super::statement::Sql::Own(&setseed),
            super::own_sql::Cache::Fresh,
        )
        .and_then(|mut stmt| stmt.execute([seed]))
        .map(drop)
        .map_err(|e| {
            worker_error(
                ErrorKind::InternalError,
                format!("Could not seed DuckDB's random generator: {e}"),
            )
        })
    }

    /// What the walk of DuckDB's syntax tree needs to know about this request; `names` are
    /// [`Engine::database_names`].
    pub(super) fn tree_rules<'n>(&'n self, names: &'n [&'n str]) -> TreeRules<'n> {
        TreeRules {
            databases: names,
            restricted: self.privacy.is_some(),
            folders: &self.folder_names,
        }
    }

    /// Enforce `policy` on this request's query: call before [`Engine::attach`], then
    /// [`Engine::check_plan`] before running anything. An empty policy changes nothing.
    pub fn enforce_privacy(&mut self, policy: &PrivacyPolicy) {
        self.privacy = (!policy.is_empty()).then(|| policy.clone());
        // The declared folders' file system and readers ask the rules about files from now on
        // (`folders.cpp`): a hidden file is a missing one, a hidden column of a Parquet file
        // does not exist for the binder.
        let files: Option<std::sync::Arc<dyn duckgate_plan_reader::FolderPrivacy>> = self
            .privacy
            .as_ref()
            .filter(|policy| policy.names_files())
            .map(|policy| std::sync::Arc::new(FileRules(policy.clone())) as _);
        duckgate_plan_reader::set_folder_privacy(self.token, files);
    }

    /// Judge every statement prepared from now on by DuckDB's plan for it (`plan_check`): only
    /// the attached databases' tables, allowed table functions, functions, types and operators,
    /// and, under privacy rules, no hidden table, no hidden column and no catalog listing (kind
    /// `policy_blocked`). First, what must be refused before DuckDB binds anything: a relation
    /// of `query` named like a file that is no relation of a database (binding would read the
    /// file); a function the binder would evaluate while binding was refused by whichever check
    /// made `query`. Call after the attach; the judgement itself happens in every
    /// [`Engine::prepare_checked`].
    pub fn start_plan_check(&mut self, query: &CheckedQuery) -> Result<(), Failure> {
        self.ensure_lock_held()?;
        if self.attached.is_empty() {
            return Err(worker_error(
                ErrorKind::InternalError,
                "start_plan_check() called before attach()",
            ));
        }
        let started = Instant::now();
        let privacy = self.privacy.is_some();
        let facts = query.facts();
        if let Some(written) = plan_check::first_file_outside(
            &self.conn,
            &self.attached,
            &self.folder_names,
            &facts.file_like,
        )? {
            let refused = duckgate_validate::validate::refusals::file_relation(&written);
            return Err(plan_check::Refused::Because(refused.into()).into_error(privacy));
        }
        self.judge.serve(plan_check::PlanRules {
            catalogs: self.attached.clone(),
            privacy: self.privacy.clone(),
            folders: self.folders.clone(),
        });
        self.pending_attach_ms += started.elapsed().as_secs_f64() * 1e3;
        Ok(())
    }

    /// [`Engine::start_plan_check`], then DuckDB's plan for `query` judged as a request's
    /// statement would be, without reading any row: prepared, and, where DuckDB binds the
    /// statement only when it runs it (`SHOW TABLES`, `SELECT now()`), its execution started and
    /// dropped before the first row.
    pub fn check_plan(&mut self, query: &CheckedQuery) -> Result<(), Failure> {
        self.start_plan_check(query)?;
        let judge = self.judge.clone();
        let mut stmt = self.prepare_checked(query)?;
        drop(stmt.stream_arrow([]).map_err(|e| judge.error_for(&e))?);
        drop(stmt);
        self.ensure_plan_judged()
    }

    /// The catalog the default database is attached as, once attached (under privacy rules, its
    /// private name).
    pub fn alias(&self) -> Option<&str> {
        self.attached
            .first()
            .map(|attached| attached.catalog.as_str())
    }

    /// Release every database's file lock before the reply leaves the worker, so that once the
    /// parent has a reply the user's pipeline may open any of the files for writing, without
    /// paying for a detach on the way out.
    ///
    /// DuckDB holds a POSIX (`fcntl`) read lock on an attached file, owned by the process: an
    /// `F_UNLCK` on the descriptor this process holds of the file (`held`) releases it in
    /// microseconds, where `DETACH` takes 0.5–1 ms on the critical path (it frees the attached
    /// catalog and cached blocks; `cargo bench --bench worker_latency`). (This used to open the
    /// file by its path and close it again, which releases the lock the same way; the worker may
    /// no longer open that path.) Without their locks the attached databases must not be read
    /// again, so every later query, catalog read or attach on this engine is refused: the
    /// worker answers and exits. If the locks cannot be released, this detaches.
    pub fn release_file_lock(&mut self) -> Result<(), Failure> {
        if self.attached.is_empty() || self.lock_released {
            return Ok(());
        }
        self.lock_released = true;
        match duckgate_plan_reader::release_database_locks(self.token) {
            Ok(()) => Ok(()),
            Err(_) => self.detach(),
        }
    }

    /// Refuse to touch the database once [`Engine::release_file_lock`] gave up its lock.
    pub(super) fn ensure_lock_held(&self) -> Result<(), Failure> {
        if self.lock_released {
            return Err(worker_error(
                ErrorKind::InternalError,
                "This worker released its lock on the database and cannot read it again.",
            ));
        }
        Ok(())
    }

    /// Detach every database, which also releases their file locks.
    pub fn detach(&mut self) -> Result<(), Failure> {
        let attached = std::mem::take(&mut self.attached);
        if attached.is_empty() {
            return Ok(());
        }
        let mut detach = String::from("USE memory;");
        for attached in &attached {
            detach.push_str(&format!(" DETACH {};", sql_identifier(&attached.catalog)));
        }
        if let Some(shadow) = self.shadow.take() {
            for catalog in &shadow.catalogs {
                detach.push_str(&format!(
                    " DETACH IF EXISTS {};",
                    sql_identifier(&catalog.name)
                ));
            }
        }
        self.conn.execute_batch(&detach).map_err(|e| {
            worker_error(
                ErrorKind::InternalError,
                format!("Could not detach the databases: {e}"),
            )
        })
    }
}

/// The privacy rules, as the declared folders' side of DuckDB asks them.
struct FileRules(PrivacyPolicy);

impl duckgate_plan_reader::FolderPrivacy for FileRules {
    fn hides_file(&self, file: &str) -> bool {
        self.0.hides_file(file)
    }

    fn has_column_rules(&self, file: &str) -> bool {
        self.0.has_file_column_rules(file)
    }

    fn hides_column(&self, file: &str, column: &str) -> bool {
        self.0.hides_file_column(file, column)
    }

    fn refuses_option(&self, option: &str) -> bool {
        !crate::plan_policy::parameter_keeps_column_names(option)
    }
}
