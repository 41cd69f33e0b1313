//! A request's attach: the database read-only under its name (or, under privacy rules, a
//! private one beneath the shadow catalog), the settings that must hold before any query, the
//! configuration locked; and the ways out: the file lock released, or a detach.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::errors::{attach_error, not_found, worker_error};
use super::{Engine, path_text, plan_check, shadow, sql_identifier, sql_string, statement};
use crate::privacy::PrivacyPolicy;
use crate::protocol::Failure;
use crate::protocol::database_names::database_alias;
use duckgate_validate::error::ErrorKind;
use duckgate_validate::validate::tree::{TreeFacts, TreeRules};

use super::statement::CheckedQuery;

impl Engine {
    /// Attach the database read-only, make it the default, and lock the configuration.
    pub fn attach(&mut self, db_path: &Path) -> Result<(), Failure> {
        self.attach_checking(db_path, None).map(drop)
    }

    /// [`Engine::attach`], while DuckDB's parser checks `sql` (see [`Engine::check_statement`])
    /// on the checker thread; the checked statement when `sql` was given. An attach error is
    /// reported first (it is the operator's to fix whatever the query), then the check's.
    pub fn attach_checking(
        &mut self,
        db_path: &Path,
        sql: Option<&str>,
    ) -> Result<Option<CheckedQuery>, Failure> {
        let rules = self.tree_rules();
        let pending_check = match sql {
            Some(sql) => Some(self.checker()?.submit(sql, &rules)?),
            None => None,
        };
        let attached = self.attach_now(db_path);
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

    /// The walk's last step, once the database is attached: a relation it found named like a
    /// file must be a table or view of the database, or binding would read the file. The walk
    /// itself runs beside the attach and cannot see the catalog; with the plan check switched
    /// off this is what refuses such a name. Unattached, nothing can be one: refused.
    pub(super) fn refuse_files_named(&self, facts: &TreeFacts) -> Result<(), Failure> {
        let outside = match self.alias.as_deref() {
            Some(alias) => plan_check::first_file_outside(
                &self.conn,
                alias,
                &self.folder_names,
                &facts.file_like,
            )?,
            None => facts
                .file_like
                .iter()
                .find(|name| !plan_check::in_declared_folder(&self.folder_names, name))
                .map(plan_check::written_name),
        };
        match outside {
            Some(written) => {
                Err(duckgate_validate::validate::refusals::file_relation(&written).into())
            }
            None => Ok(()),
        }
    }

    fn attach_now(&mut self, db_path: &Path) -> Result<(), Failure> {
        self.ensure_lock_held()?;
        let started = Instant::now();
        let text = path_text(db_path)?;
        match std::fs::metadata(&text) {
            Ok(meta) if meta.is_dir() => {
                return Err(worker_error(
                    ErrorKind::DatabaseError,
                    format!("The database path {text} is a directory, not a DuckDB file."),
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(not_found(Path::new(&text)));
            }
            // Anything else (e.g. denied) is DuckDB's to report below.
            Err(_) => {}
        }
        let alias = database_alias(db_path);
        // Under privacy rules the file goes under a private name and the binder sees only the
        // shadow catalog under the public one (`shadow`).
        let mut shadow = match &self.privacy {
            Some(_) => Some(shadow::Shadow {
                private: shadow::private_alias()?,
                public: alias.clone(),
                view_reads: Default::default(),
            }),
            None => None,
        };
        let attached_as = shadow.as_ref().map_or(&alias, |s| &s.private).clone();
        let attach = format!(
            "ATTACH {} AS {} (READ_ONLY)",
            sql_string(&text),
            sql_identifier(&attached_as)
        );
        self.conn
            .execute_batch(&attach)
            .map_err(|e| attach_error(&e, Path::new(&text)))?;
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
            // `allowed_paths` lets SQL *write* the database and its WAL too (measured:
            // `COPY … TO '<db>' (USE_TMP_FILE false)` overwrote the file), and ATTACH adds
            // them to it anyway. Once attached, DuckDB reads through handles it already holds,
            // so without spilling the local file system can go entirely (DuckDB refuses to
            // re-enable it). Spilling needs it: DuckDB's temporary files go through the same
            // file system (measured: with it disabled, a spilling DISTINCT fails with
            // "File system LocalFileSystem has been disabled by configuration"). Then writes to
            // the database are denied by landlock (read-only grant) and by both SQL checks.
            // The parent gives a worker no spilling under privacy rules unless the operator
            // opted in (`gateway::config::spills`), so there SQL can never open the file by path.
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
        let selected = match (&mut shadow, &self.privacy) {
            (Some(shadow), Some(policy)) => shadow.build(&self.conn, &self.judge, policy),
            _ => self
                .conn
                .execute_batch(&format!("USE {};", sql_identifier(&alias)))
                .map_err(|e| {
                    worker_error(
                        ErrorKind::InternalError,
                        format!("Could not select the database: {e}"),
                    )
                }),
        };
        if let Some(pending) = pending {
            self.checker()?.collect_configured(pending)?;
        }
        selected?;
        self.alias = Some(attached_as);
        self.shadow = shadow;
        self.attached_file = Some(PathBuf::from(text));
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

    /// What the walk of DuckDB's syntax tree needs to know about this request.
    pub(super) fn tree_rules(&self) -> TreeRules<'_> {
        TreeRules {
            database: &self.database,
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
    /// the attached database's tables, allowed table functions, functions, types and operators,
    /// and, under privacy rules, no hidden table, no hidden column and no catalog listing (kind
    /// `policy_blocked`). First, what must be refused before DuckDB binds anything: a relation
    /// of `query` named like a file that is no relation of the database (binding would read the
    /// file); a function the binder would evaluate while binding was refused by whichever check
    /// made `query`. Call after the attach; the judgement itself happens in every
    /// [`Engine::prepare_checked`].
    pub fn start_plan_check(&mut self, query: &CheckedQuery) -> Result<(), Failure> {
        self.ensure_lock_held()?;
        let alias = self.alias.clone().ok_or_else(|| {
            worker_error(
                ErrorKind::InternalError,
                "start_plan_check() called before attach()",
            )
        })?;
        let started = Instant::now();
        let privacy = self.privacy.is_some();
        let facts = query.facts();
        if let Some(written) = plan_check::first_file_outside(
            &self.conn,
            &alias,
            &self.folder_names,
            &facts.file_like,
        )? {
            let refused = duckgate_validate::validate::refusals::file_relation(&written);
            return Err(plan_check::Refused::Because(refused.into()).into_error(privacy));
        }
        self.judge.serve(plan_check::PlanRules {
            alias,
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

    /// The catalog name the database is attached as, once attached.
    pub fn alias(&self) -> Option<&str> {
        self.alias.as_deref()
    }

    /// Release the database's file lock before the reply leaves the worker, so that once the
    /// parent has a reply the user's pipeline may open the file for writing, without paying for
    /// a detach on the way out.
    ///
    /// DuckDB holds a POSIX (`fcntl`) read lock on an attached file, and POSIX ends all of a
    /// process's locks on a file when the process closes *any* descriptor of it: opening the
    /// file and closing it again releases the lock in microseconds, where `DETACH` takes
    /// 0.5–1 ms on the critical path (it frees the attached catalog and cached blocks; `cargo
    /// bench --bench worker_latency`). Without its lock the attached database must not be read
    /// again, so every later query, catalog read or attach on this engine is refused: the worker
    /// answers and exits. If the file cannot be opened (removed meanwhile), this detaches.
    pub fn release_file_lock(&mut self) -> Result<(), Failure> {
        let Some(file) = self.attached_file.take() else {
            return Ok(());
        };
        self.lock_released = true;
        match std::fs::File::open(&file) {
            // Dropping the descriptor closes it, which is what releases the lock.
            Ok(descriptor) => {
                drop(descriptor);
                Ok(())
            }
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

    /// Detach the database, which also releases its file lock.
    pub fn detach(&mut self) -> Result<(), Failure> {
        self.attached_file = None;
        let Some(alias) = self.alias.take() else {
            return Ok(());
        };
        let mut detach = format!("USE memory; DETACH {};", sql_identifier(&alias));
        if let Some(shadow) = self.shadow.take() {
            detach.push_str(&format!(" DETACH {};", sql_identifier(&shadow.public)));
        }
        self.conn.execute_batch(&detach).map_err(|e| {
            worker_error(
                ErrorKind::InternalError,
                format!("Could not detach the database: {e}"),
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
}
