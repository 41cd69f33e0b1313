//! The worker's check of DuckDB's bound plan: every operator, table, column, function and type
//! DuckDB bound for a statement must be allowed, or the statement is never prepared, let alone
//! run. Under the operator's privacy rules the statement also may read no hidden table, no
//! hidden column and no catalog listing.
//!
//! Why the bound plan. The walks of the SQL (the parent's of sqlparser's tree, the worker's of
//! DuckDB's, `validate::tree`) see names as written; DuckDB's binder decides what they mean. A
//! name can be a CTE, a table, a view or macro stored in the database whose text no walk sees,
//! one of DuckDB's system views (`pg_settings` is a view over `duckdb_settings()`), or a file
//! (a replacement scan). The bound plan has all of that resolved: every table scan names its
//! catalog, schema and table and lists the columns it reads, every function call is bound to
//! the built-in it resolved to (macros expanded), and every value has its type.
//!
//! How it is read. The plan reader (`duckgate_plan_reader`, a C++ visitor compiled with DuckDB)
//! is installed in the worker's DuckDB as an optimizer extension. Once [`PlanJudge::serve`] has
//! given it this request's rules, DuckDB hands it every plan it prepares on the engine's
//! connection, twice: as bound, before any optimizer ran (every reference the statement makes,
//! even one the optimizer would drop, and nothing evaluated: the optimizer's constant folding
//! would run functions on constant arguments), and optimized (what execution will read). The
//! judge decides from DuckDB's own structures; a refusal makes DuckDB's prepare fail. The
//! plan judged is therefore the plan that runs, with no second bind, and every statement the
//! worker prepares from the agent's (the rendering wrapper, `DESCRIBE`, `EXPLAIN`, a rebind at
//! execution) is judged by the same rules.
//!
//! The rules, each failing closed (anything this check does not recognise is refused):
//! - every operator is allowed by `plan_policy::enumerations::operator_use`, every expression
//!   class by its `expression_allowed`, every type by its `type_allowed`; a code the
//!   reader does not know, or a part of the plan it could not read, is refused;
//! - a LOGICAL_GET is a scan of a table of the attached database (`seq_scan`) or an allowed
//!   table function of `validate::function_policy`, the one table the two walks read too;
//! - every bound function, aggregate, window function, operator and cast has a row in that
//!   table, and its class allows it; one with no row, such as one a later DuckDB adds, is
//!   refused;
//! - a scan binds no file, unless folders are declared and it is a file reader of theirs
//!   (`Class::ReadsDeclaredFolders`): then the reader's list must be readable here, and every
//!   file on it, its symbolic links resolved, inside a declared folder and a regular file; all
//!   the files a plan binds are at most `--files-max-count`, of at most `--files-max-bytes`
//!   together;
//! - under privacy rules: no scan of a hidden table in the bound plan; no hidden column read by
//!   the optimized plan (see below); nothing lists the catalog; every refusal is the same
//!   [`PLAN_REFUSAL`](crate::privacy::PLAN_REFUSAL), naming nothing.
//!
//! Hidden columns are judged on the optimized plan. A view stored in the database may compute
//! some of its columns from hidden ones; the bound plan of a query over it binds every column
//! of the view, and DuckDB's optimizer then drops the columns the query does not use. Under
//! privacy rules the optimizers that decide from the data's statistics are off
//! ([`DATA_DEPENDENT_OPTIMIZERS`]), so every rewrite left is one that holds for all data of the
//! same schema: a column the optimized plan does not read cannot change the answer. A query
//! over a view's visible columns is answered; one whose answer depends on a hidden column (a
//! filter on it, inside the view or out) still reads it, and is refused.
//!
//! Under privacy rules the binder sees a shadow catalog in which hidden objects do not exist
//! (`shadow`): a hidden name fails like a made-up one, and expansions give the visible columns.
//! What the shadow cannot hide is a view or macro stored in the database, whose text may read
//! hidden objects; this check is what stops those, from the column bindings, and it holds even
//! if a query names the private catalog.
//!
//! DuckDB's own errors pass unchanged: matching hidden names in their text (which the agent
//! writes into, `struct_extract({'a': 1}, 'raw_events')`) would itself tell hidden names apart.
//! The worker rewords "not found" errors afterwards (`Engine::private_error`), whatever they
//! name.
//!
//! The parts: this file holds the judge and its state, which DuckDB calls; the policy it applies
//! to each plan's facts (its operators, expressions, types, functions and scans, and the files a
//! scan binds) is `src/plan_policy/`, which needs no DuckDB and is fuzzed without it; `written`
//! judges what the query writes, before DuckDB binds it (functions evaluated while binding,
//! relations named like files).

use std::sync::{Mutex, MutexGuard};

use duckgate_plan_reader::{Judge, Phase, PlanFacts, ScanFacts, Verdict};

use super::errors::query_error;
use crate::plan_policy::{check_bound, check_optimized};
use crate::protocol::Failure;

#[cfg(test)]
mod tests;
mod written;

pub(crate) use crate::plan_policy::{PlanRules, Refused, table_reads};
pub(crate) use written::{
    first_file_outside, in_declared_folder, refuse_written_functions, written_name,
};

/// The optimizer that makes plans depend on column statistics; off under privacy rules, so
/// what a query costs, and which columns its optimized plan reads, do not depend on the data of
/// the tables it reads.
pub(crate) const DATA_DEPENDENT_OPTIMIZERS: &str = "statistics_propagation";

/// The judge the engine's connection is armed with (`duckgate_plan_reader::arm`).
///
/// Until [`PlanJudge::serve`] it allows every plan: the worker's own statements (the attach,
/// the shadow catalog, its warm-up) run before a request's rules exist. `serve` is one way:
/// nothing turns the rules off again, so every statement prepared after it, whoever builds it,
/// is judged.
#[derive(Debug, Default)]
pub(crate) struct PlanJudge {
    state: Mutex<JudgeState>,
}

#[derive(Debug, Default)]
struct JudgeState {
    /// This request's rules, once serving.
    rules: Option<PlanRules>,
    /// The first refusal since [`PlanJudge::begin_statement`].
    refused: Option<Refused>,
    /// `SHOW <table>` scans (`pragma_show`) in the bound plans since then.
    shown_tables: u32,
    /// DuckDB's names of the last optimized plan's result types since then.
    result_types: Option<Vec<String>>,
    /// The scans of every plan prepared while [`PlanJudge::trace_scans`] runs.
    trace: Option<TracedScans>,
}

/// The scans of the plans DuckDB prepared during one [`PlanJudge::trace_scans`], by phase.
#[derive(Debug, Default)]
pub(crate) struct TracedScans {
    /// Scans of the plans as bound: every table and column the statement references.
    pub(crate) bound: Vec<ScanFacts>,
    /// Scans of the optimized plans: what execution would read.
    pub(crate) optimized: Vec<ScanFacts>,
    /// How many plans were traced in each phase.
    pub(crate) plans: (u32, u32),
}

/// What the judge found for one statement's prepare.
#[derive(Debug)]
pub(crate) struct StatementVerdict {
    /// Why a plan was refused, if one was.
    pub(crate) refused: Option<Refused>,
    /// `SHOW <table>` scans the bound plans held.
    pub(crate) shown_tables: u32,
    /// The request's privacy rules hold.
    pub(crate) privacy: bool,
}

impl PlanJudge {
    fn state(&self) -> MutexGuard<'_, JudgeState> {
        // The judge never panics while holding the lock (a panic in a check happens outside
        // it), so a poisoned lock still holds whole state.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Judge every plan from now on by `rules`.
    pub(crate) fn serve(&self, rules: PlanRules) {
        self.state().rules = Some(rules);
    }

    /// Whether the judge has a request's rules.
    pub(crate) fn serving(&self) -> bool {
        self.state().rules.is_some()
    }

    /// Run `work` (the worker's own statements, before any request's rules) and return the
    /// scans of every plan DuckDB prepared meanwhile, as bound and optimized.
    pub(crate) fn trace_scans<T>(&self, work: impl FnOnce() -> T) -> (T, TracedScans) {
        self.state().trace = Some(TracedScans::default());
        let result = work();
        let traced = self.state().trace.take().unwrap_or_default();
        (result, traced)
    }

    /// Forget what the previous statement's plans left.
    pub(crate) fn begin_statement(&self) {
        let mut state = self.state();
        state.refused = None;
        state.shown_tables = 0;
        state.result_types = None;
    }

    /// DuckDB's names of the result column types of the last optimized plan judged since
    /// [`PlanJudge::begin_statement`], when DuckDB had resolved them.
    pub(crate) fn result_types(&self) -> Option<Vec<String>> {
        self.state().result_types.clone()
    }

    /// What the judge found since [`PlanJudge::begin_statement`].
    pub(crate) fn statement_verdict(&self) -> StatementVerdict {
        let mut state = self.state();
        StatementVerdict {
            refused: state.refused.take(),
            shown_tables: state.shown_tables,
            privacy: state
                .rules
                .as_ref()
                .is_some_and(|rules| rules.privacy.is_some()),
        }
    }
}

impl PlanJudge {
    /// The error for a statement DuckDB failed to run: the judge's reason when a plan DuckDB
    /// bound anew while running it was refused, else DuckDB's own error.
    pub(crate) fn error_for(&self, error: &duckdb::Error) -> Failure {
        let verdict = self.statement_verdict();
        match verdict.refused {
            Some(refused) => refused.into_error(verdict.privacy),
            None => query_error(error),
        }
    }
}

impl Judge for PlanJudge {
    fn judge(&self, phase: Phase, facts: &PlanFacts) -> Verdict {
        let rules = {
            let mut state = self.state();
            if phase == Phase::Optimized && !facts.result_types.is_empty() {
                state.result_types = Some(facts.result_types.clone());
            }
            if let Some(trace) = state.trace.as_mut() {
                let (scans, count) = match phase {
                    Phase::Bound => (&mut trace.bound, &mut trace.plans.0),
                    Phase::Optimized => (&mut trace.optimized, &mut trace.plans.1),
                };
                scans.extend(facts.scans.iter().cloned());
                *count += 1;
            }
            state.rules.clone()
        };
        let Some(rules) = rules else {
            return Verdict::Allow;
        };
        let mut shown_tables = 0;
        let checked = match phase {
            Phase::Bound => check_bound(&rules, facts, &mut shown_tables),
            Phase::Optimized => check_optimized(&rules, facts),
        };
        let mut state = self.state();
        state.shown_tables += shown_tables;
        match checked {
            Ok(()) => Verdict::Allow,
            Err(refused) => {
                state.refused.get_or_insert(refused);
                Verdict::Refuse
            }
        }
    }
}
