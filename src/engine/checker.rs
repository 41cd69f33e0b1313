//! The statement check on its own connection and thread.
//!
//! DuckDB's parser check (`json_serialize_sql`, see `statement.rs`) needs no database, and
//! attaching the database needs no parser check, so a request does both at once: the check
//! on a second connection to the same in-memory instance, on a thread started (and warmed)
//! before the request arrives. The query itself runs only after both have finished.
//!
//! The same thread also runs the statements that change only *global* settings (the
//! hardening after the attach, see `Engine::attach_now`): a global setting takes effect for
//! every connection of the instance, so it may be set on this one while the main connection
//! selects the attached database; each trivial statement costs 0.2–0.3 ms on a 2-vCPU VM.

use std::sync::mpsc::{self, Receiver, Sender};

use duckdb::Connection;

use super::errors::worker_error;
use super::statement;
use crate::protocol::Failure;
use duckgate_validate::error::ErrorKind;
use duckgate_validate::validate::tree::TreeRules;

use super::statement::CheckedQuery;

/// The checker thread's stack. DuckDB's parser, its JSON serializer and serde_json all recurse
/// once per level of the query's nesting, about three JSON levels per expression level, up to
/// DuckDB's expression-depth limit of 1000. The pages are only touched as deep as a query goes.
const STACK_BYTES: usize = 64 << 20;

/// What the checker thread is asked to do.
enum Job {
    /// DuckDB's statement check of one SQL text and the walk of its syntax tree.
    Check {
        sql: String,
        /// The catalog names the databases are attached as, the default first.
        databases: Vec<String>,
        /// A privacy rule hides names.
        restricted: bool,
        /// The declared folders' names.
        folders: Vec<String>,
    },
    /// Statements that change global settings only.
    Configure(String),
    /// One SELECT as DuckDB writes its syntax tree back out (`statement::render_select`).
    Render(String),
    /// DuckDB's syntax tree of one SELECT (`statement::parse_single_select`), not walked.
    Parse(String),
    /// A syntax tree (as `json_serialize_sql` writes it) as DuckDB writes it out as SQL.
    RenderTree(String),
}

/// The checker thread's end of the conversation: jobs in, one answer per job out, on a
/// channel per kind of job (so collecting one kind never consumes the other's answer).
pub(super) struct Checker {
    jobs: Sender<Job>,
    verdicts: Receiver<Result<CheckedQuery, Failure>>,
    configured: Receiver<Result<(), Failure>>,
    rendered: Receiver<Result<String, Failure>>,
    parsed: Receiver<Result<serde_json::Value, Failure>>,
}

/// A check submitted and not yet collected (with [`Checker::collect`]).
#[must_use = "a submitted check must be collected before the query runs"]
pub(super) struct PendingCheck {
    _private: (),
}

/// Global settings submitted and not yet confirmed (with [`Checker::collect_configured`]).
#[must_use = "the settings must be confirmed before the query runs"]
pub(super) struct PendingConfigure {
    _private: (),
}

impl Checker {
    /// Open a second connection on `conn`'s instance (the database `token` names) and start the
    /// thread that owns it. The thread's one-time costs are paid by [`Checker::warm_up`], or by
    /// the first request.
    pub(super) fn start(
        conn: &Connection,
        token: duckgate_plan_reader::DatabaseToken,
    ) -> Result<Checker, Failure> {
        let own = conn.try_clone().map_err(|e| {
            worker_error(
                ErrorKind::InternalError,
                format!("Could not open the checker connection: {e}"),
            )
        })?;
        let (jobs, incoming) = mpsc::channel::<Job>();
        let (verdict_out, verdicts) = mpsc::channel();
        let (configured_out, configured) = mpsc::channel();
        let (rendered_out, rendered) = mpsc::channel();
        let (parsed_out, parsed) = mpsc::channel();
        std::thread::Builder::new()
            .name("duckgate-check".into())
            .stack_size(STACK_BYTES)
            .spawn(move || {
                while let Ok(job) = incoming.recv() {
                    let sent = match job {
                        Job::Check {
                            sql,
                            databases,
                            restricted,
                            folders,
                        } => {
                            let names: Vec<&str> = databases.iter().map(String::as_str).collect();
                            let rules = TreeRules {
                                databases: &names,
                                restricted,
                                folders: &folders,
                            };
                            verdict_out
                                .send(statement::parse_and_walk(&own, token, &sql, &rules))
                                .is_ok()
                        }
                        Job::Render(sql) => rendered_out
                            .send(statement::render_select(&own, &sql))
                            .is_ok(),
                        Job::Parse(sql) => parsed_out
                            .send(statement::parse_single_select(&own, &sql))
                            .is_ok(),
                        Job::RenderTree(tree) => rendered_out
                            .send(statement::render_tree(&own, &tree))
                            .is_ok(),
                        Job::Configure(sql) => configured_out
                            .send(own.execute_batch(&sql).map_err(|e| {
                                worker_error(
                                    ErrorKind::InternalError,
                                    format!("Could not configure DuckDB for the query: {e}"),
                                )
                            }))
                            .is_ok(),
                    };
                    if !sent {
                        return;
                    }
                }
            })
            .map_err(|e| {
                worker_error(
                    ErrorKind::InternalError,
                    format!("Could not start the checker thread: {e}"),
                )
            })?;
        Ok(Checker {
            jobs,
            verdicts,
            configured,
            rendered,
            parsed,
        })
    }

    /// Check `SELECT 1` and run `settings` (statements that change no setting's value) on the
    /// thread, so that its one-time costs (parser, serializer, the walk, a configuration
    /// statement) are paid before a request; a checker that cannot check `SELECT 1` must not
    /// serve.
    pub(super) fn warm_up(&self, settings: Option<String>) -> Result<(), Failure> {
        let rules = TreeRules {
            databases: &[],
            restricted: false,
            folders: &[],
        };
        let check = self.submit("SELECT 1", &rules)?;
        let configured = settings.map(|sql| self.submit_configure(sql)).transpose()?;
        let verdict = self.collect(check).map(drop);
        if let Some(pending) = configured {
            self.collect_configured(pending)?;
        }
        verdict
    }

    /// Hand `sql` to the checker thread, to be walked with `rules`; collect the verdict with
    /// [`Checker::collect`].
    pub(super) fn submit(&self, sql: &str, rules: &TreeRules<'_>) -> Result<PendingCheck, Failure> {
        self.jobs
            .send(Job::Check {
                sql: sql.to_owned(),
                databases: rules.databases.iter().map(|d| (*d).to_owned()).collect(),
                restricted: rules.restricted,
                folders: rules.folders.to_vec(),
            })
            .map_err(|_| checker_gone())?;
        Ok(PendingCheck { _private: () })
    }

    /// Hand statements that change only global settings to the checker thread (they run after
    /// any check submitted before); confirm them with [`Checker::collect_configured`].
    pub(super) fn submit_configure(&self, sql: String) -> Result<PendingConfigure, Failure> {
        self.jobs
            .send(Job::Configure(sql))
            .map_err(|_| checker_gone())?;
        Ok(PendingConfigure { _private: () })
    }

    /// `sql` (exactly one SELECT) as DuckDB writes its syntax tree back out, made on the
    /// checker's connection, where no request's plan check judges the statements that do it.
    pub(super) fn render_select(&self, sql: &str) -> Result<String, Failure> {
        self.jobs
            .send(Job::Render(sql.to_owned()))
            .map_err(|_| checker_gone())?;
        self.rendered.recv().map_err(|_| checker_gone())?
    }

    /// DuckDB's syntax tree of `sql` (exactly one SELECT), made on the checker's connection,
    /// where no request's plan check judges the statement that does it; not walked.
    pub(super) fn parse(&self, sql: &str) -> Result<serde_json::Value, Failure> {
        self.jobs
            .send(Job::Parse(sql.to_owned()))
            .map_err(|_| checker_gone())?;
        self.parsed.recv().map_err(|_| checker_gone())?
    }

    /// `tree` (DuckDB's syntax tree of one SELECT, as `json_serialize_sql` writes it) as DuckDB
    /// writes it out as SQL, on the checker's connection.
    pub(super) fn render_tree(&self, tree: &serde_json::Value) -> Result<String, Failure> {
        self.jobs
            .send(Job::RenderTree(tree.to_string()))
            .map_err(|_| checker_gone())?;
        self.rendered.recv().map_err(|_| checker_gone())?
    }

    /// Wait until submitted settings are in force. A checker that died gives an error.
    pub(super) fn collect_configured(&self, _pending: PendingConfigure) -> Result<(), Failure> {
        self.configured.recv().map_err(|_| checker_gone())?
    }

    /// The verdict on a submitted check: the checked statement when it passed. A checker that
    /// died gives an error, never a pass (fail closed).
    pub(super) fn collect(&self, _pending: PendingCheck) -> Result<CheckedQuery, Failure> {
        self.verdicts.recv().map_err(|_| checker_gone())?
    }
}

fn checker_gone() -> Failure {
    worker_error(
        ErrorKind::InternalError,
        "DuckDB's statement check is not available (its thread has stopped).",
    )
}
