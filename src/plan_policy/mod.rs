//! What a bound plan may hold: the policy the worker's plan check (`src/engine/plan_check/`)
//! applies to the facts DuckDB's plan reader hands it, one plan at a time.
//!
//! The facts are plain values (`crates/plan-facts`: every operator, expression class, type and
//! bound function of the plan, and every scan with its table, columns and files), so this policy
//! needs no DuckDB: the plan check runs it inside DuckDB's prepare, and the `plan_facts` fuzz
//! target ([`fuzz`]) runs it on plans built from arbitrary bytes.
//!
//! - `enumerations`: each operator type, expression class and type of DuckDB 2.0, decided once;
//! - `facts`: each fact of a bound plan against those decisions and the function policy
//!   (`validate::function_policy`), each scan (the attached databases' tables, allowed table
//!   functions, the files a declared folders' reader bound, within the caps), and under the
//!   operator's privacy rules what the optimized plan reads;
//! - here: the rules of one request ([`PlanRules`]) and why a plan is refused ([`Refused`]),
//!   which under privacy rules becomes the one [`PLAN_REFUSAL`], naming nothing.

use std::path::PathBuf;
use std::sync::Arc;

use crate::folders::FolderRules;
use crate::privacy::{PLAN_REFUSAL, PrivacyPolicy};
use crate::protocol::Failure;
use duckgate_validate::error::ErrorKind;

mod enumerations;
mod facts;
pub mod fuzz;

pub(crate) use facts::{check_bound, check_optimized};
// What a view's plan reads, for the engine's lineage of views.
#[cfg(feature = "engine")]
pub(crate) use facts::table_reads;
// The Parquet readers' named parameters, as classified for files a column rule names: DuckDB's
// side asks the one classification, and a test holds the lists against the linked DuckDB.
#[cfg(feature = "engine")]
pub(crate) use facts::parameter_keeps_column_names;
#[cfg(all(feature = "engine", test))]
pub(crate) use facts::{PARAMETERS_BINDING_COLUMNS, PARAMETERS_KEEPING_COLUMN_NAMES};

/// The privacy refusal; it names nothing and says what to do instead.
fn privacy_refusal() -> Failure {
    Failure {
        refusal: Some(crate::protocol::WorkerRefusal::PrivacyPlan),
        ..Failure::new(ErrorKind::PolicyBlocked, PLAN_REFUSAL)
    }
}

/// One database as a request attached it: plain names (and the file), so the policy needs no
/// DuckDB to map a scan's catalog back to the database the rules know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attached {
    /// Its declared name: what SQL and every reply call it.
    pub(crate) name: String,
    /// The catalog the file is attached as: its name, or under privacy rules a private one
    /// drawn for this request (the engine's `shadow::private_alias`).
    pub(crate) catalog: String,
    /// The file, whose lock the engine releases before it replies.
    pub(crate) file: PathBuf,
}

/// What the plan check enforces beyond the base rules, for one request.
#[derive(Debug, Clone)]
pub(crate) struct PlanRules {
    /// The databases as attached: the catalogs a table scan may read (under privacy rules the
    /// private ones), each with the name the privacy rules know it by. A scan of any other
    /// catalog is refused.
    pub(crate) catalogs: Vec<Attached>,
    /// The operator's privacy rules, when there are any.
    pub(crate) privacy: Option<PrivacyPolicy>,
    /// The declared folders and the caps on what one query binds in them.
    pub(crate) folders: Arc<FolderRules>,
}

/// Why a plan is refused, before it becomes an error: under privacy rules every reason becomes
/// the one [`PLAN_REFUSAL`].
#[derive(Debug, Clone)]
pub(crate) enum Refused {
    /// A reason worth telling the agent (the refusal the parent would give).
    Because(Failure),
    /// A reason that depends only on what the agent may see, told under privacy rules too: a
    /// declared folder's cap, past which the files a plan binds (never hidden ones, which the
    /// folders' file system does not list) are too many or too large. It names the flag that
    /// changes it.
    Visible(Failure),
    /// The plan has a shape, or binds something, this check does not allow.
    Unknown(String),
}

impl Refused {
    /// The error the agent reads: under privacy rules the one refusal that names nothing.
    pub(crate) fn into_error(self, privacy: bool) -> Failure {
        match self {
            Refused::Visible(error) => error,
            Refused::Because(_) | Refused::Unknown(_) if privacy => privacy_refusal(),
            Refused::Because(error) => error,
            Refused::Unknown(what) => Failure {
                kind: ErrorKind::PolicyBlocked,
                message: format!(
                    "DuckDB's plan for this query uses {what}, which duckgate does not allow, so \
                     it was not run."
                ),
                construct: Some(what),
                suggestion: Some(
                    "Query the database's tables with plain SELECTs (see list_tables).".into(),
                ),
                missing: None,
                refusal: None,
                origin: crate::protocol::MessageOrigin::Duckgate,
            },
        }
    }
}
