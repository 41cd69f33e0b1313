//! Under privacy rules, what each column of a view stored in the database reads, from DuckDB's
//! own plans of it: the shadow catalog (`shadow`) and the parent's catalog leave out every view
//! column that reads hidden data, so its name and its type (an ENUM's labels, a STRUCT's field
//! names) are hidden with it, and the view's other columns stay answerable.
//!
//! Why plans and not the view's text: the binder decides what every name in the definition
//! means (views over views, `SELECT *`, macros), and the optimizer decides what a column needs:
//! `SELECT c FROM v`, optimized, reads exactly the stored columns `c` is computed from and
//! those that filter or join `v`'s rows. The worker's plan reader (`plan_check::PlanJudge`)
//! hands over the scans of both of DuckDB's plans for it, as bound and as optimized.
//!
//! The rule for one column `c` of view `v`:
//! - what the optimized plan of `SELECT c FROM v` reads, which is what its values depend on
//!   (the statistics optimizer is off under privacy rules, so this does not depend on the data);
//! - and, when `c`'s type itself carries names or labels (`ColumnType::carries_names`),
//!   everything the bound plan references: the optimizer may fold a reference away
//!   (`CASE WHEN false THEN hidden END`, an empty `WHERE false`) while the type it gave the
//!   column stays;
//! - a view whose plan DuckDB would not prepare, or prepared without showing it, may read
//!   anything: `None`, hidden.
//!
//! A view whose bound plan of `SELECT *` reads nothing hidden needs no more: every column's
//! reads are a part of that.

use duckdb::Connection;

use super::convert::ColumnType;
use super::own_sql::{Cache, OwnSql};
use super::plan_check::{PlanJudge, table_reads};
use super::statement::{Sql, prepare_sql};
use crate::plan_policy::Attached;
use crate::privacy::ReadColumn;

/// What DuckDB's plans of `select` read from the attached `catalogs` (a view may read another
/// database's tables): (bound, optimized, whether the first result column's type carries
/// names); `None` when DuckDB did not prepare it or did not show its bound plan.
fn traced_reads(
    conn: &Connection,
    judge: &PlanJudge,
    catalogs: &[Attached],
    select: &OwnSql,
) -> Option<(Vec<ReadColumn>, Option<Vec<ReadColumn>>, bool)> {
    let (prepared, traced) = judge.trace_scans(|| {
        prepare_sql(conn, Sql::Own(select), Cache::Fresh).map(|stmt| {
            stmt.column_count() > 0
                && ColumnType::from_duckdb(&stmt.column_logical_type(0), None).carries_names()
        })
    });
    let carries_names = prepared.ok()?;
    let (bound_plans, optimized_plans) = traced.plans;
    if bound_plans == 0 {
        return None;
    }
    let optimized = (optimized_plans > 0).then(|| table_reads(catalogs, &traced.optimized));
    Some((
        table_reads(catalogs, &traced.bound),
        optimized,
        carries_names,
    ))
}

/// For each of `columns` of the view `schema.view` of the catalog `alias` (one of `catalogs`),
/// what it reads (see the module documentation); `None`: unknown, so it may read anything.
/// `hidden` says whether reads include hidden data; it decides whether the columns must be
/// traced one by one.
pub(super) fn view_column_reads(
    conn: &Connection,
    judge: &PlanJudge,
    catalogs: &[Attached],
    alias: &str,
    (schema, view): (&str, &str),
    columns: &[&str],
    hidden: impl Fn(&[ReadColumn]) -> bool,
) -> Vec<Option<Vec<ReadColumn>>> {
    let all = OwnSql::select_from_view(alias, schema, view, None);
    if let Some((bound, _, _)) = traced_reads(conn, judge, catalogs, &all)
        && !hidden(&bound)
    {
        return columns.iter().map(|_| Some(bound.clone())).collect();
    }
    columns
        .iter()
        .map(|column| {
            let select = OwnSql::select_from_view(alias, schema, view, Some(column));
            let (bound, optimized, carries_names) = traced_reads(conn, judge, catalogs, &select)?;
            Some(match optimized {
                Some(mut reads) if carries_names => {
                    reads.extend(bound);
                    reads
                }
                Some(reads) => reads,
                // Bound but not optimized at prepare: everything it references.
                None => bound,
            })
        })
        .collect()
}
