//! Running a request's one statement: DuckDB's statement check, the query streamed into JSON
//! rows under the row and byte caps, `EXPLAIN`, and what the agent may see of an error or a
//! result under privacy rules.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use serde_json::Value as Json;

use super::convert::{self, ColumnType};
use super::errors::{query_error, worker_error};
use super::local_time::LocalTime;
use super::own_sql::{Cache, Prepared};
use super::statement::{CheckedQuery, Checks};
use super::statement::{Sql, prepare_sql};
use super::{Engine, plan_check};
use crate::protocol::encoding::json_size;
use crate::protocol::{ColumnMeta, ExplainResult, Failure, MessageOrigin, QueryResult};
use duckgate_plan_reader::Phase;
use duckgate_validate::error::ErrorKind;
use duckgate_validate::validate::{functions, refusals};

impl Engine {
    /// DuckDB's own parser must see exactly one statement of a read-only type, and the worker's
    /// walk of its syntax tree (`validate::tree`) must pass it; then a relation it names like a
    /// file must be one of an attached database's. The checked statement, which is what
    /// [`Engine::prepare_checked`] takes.
    pub fn check_statement(&self, sql: &str) -> Result<CheckedQuery, Failure> {
        let checker = self.checker()?;
        let names = self.database_names();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let pending = checker.submit(sql, &self.tree_rules(&names))?;
        let query = checker.collect(pending)?;
        self.refuse_files_named(query.facts())?;
        Ok(query)
    }

    /// A statement the worker builds from `query` (`derive` gets DuckDB's rendering of the one
    /// `SELECT` the checks read, never the agent's text), checked again by the checks `query`
    /// passed.
    fn derived(
        &self,
        query: &CheckedQuery,
        derive: impl FnOnce(&str) -> String,
    ) -> Result<CheckedQuery, Failure> {
        let rendered = self.render_checked_select(query)?;
        let derived = derive(&rendered);
        match query.checks() {
            Checks::Walked => self.check_statement(&derived),
            Checks::PlanCheckParsed => self.parse_for_plan_check(&derived),
            // The engine's own statement stays its own: built from text compiled into duckgate
            // and DuckDB's rendering of it.
            Checks::Own => Ok(CheckedQuery::derived_own(query, derived)),
            #[cfg(any(test, feature = "test-bypass"))]
            Checks::Off => Ok(CheckedQuery::with_checks_off(&derived)),
        }
    }

    /// DuckDB's rendering of the one `SELECT` the checks of `query` read (`json_serialize_sql` →
    /// `json_deserialize_sql`, on the checker's connection), to build a statement around.
    pub(super) fn render_checked_select(&self, query: &CheckedQuery) -> Result<String, Failure> {
        self.checker()?.render_select(query.select())
    }

    /// The one way the agent's query is prepared (through `statement::prepare_sql`): DuckDB binds and plans `query`, and once
    /// [`Engine::start_plan_check`] has given the plan check this request's rules, the check
    /// judges both of DuckDB's plans for it before the statement exists (`plan_check`).
    /// A refused plan is answered with the check's reason, never DuckDB's message about the
    /// refusal. It fails closed when DuckDB prepared the statement without showing the check
    /// its plans (a statement with parameters, which DuckDB plans only once they are bound, or
    /// an optimizer switched off), and when its plan shows fewer `SHOW <table>` scans than the
    /// walk found `SHOW <name>`s (a `SHOW threads` reads a setting, which the binder answers
    /// as a constant).
    pub(super) fn prepare_checked(&self, query: &CheckedQuery) -> Result<Prepared<'_>, Failure> {
        self.judge.begin_statement();
        let judged = |phase| self.armed.plans_judged(phase);
        let before = (judged(Phase::Bound), judged(Phase::Optimized));
        let prepared = prepare_sql(&self.conn, Sql::Checked(query), Cache::Fresh);
        let verdict = self.judge.statement_verdict();
        let stmt = match (prepared, verdict.refused) {
            (Err(_), Some(refused)) | (Ok(_), Some(refused)) => {
                return Err(refused.into_error(verdict.privacy));
            }
            (Err(e), None) => return Err(query_error(&e)),
            (Ok(stmt), None) => stmt,
        };
        if !self.judge.serving() {
            return Ok(stmt);
        }
        if stmt.parameter_count() > 0 {
            return Err(worker_error(
                ErrorKind::InvalidArgument,
                "The query has parameters ($1, ?), which duckgate cannot bind: write the values \
                 into the query instead.",
            ));
        }
        // DuckDB plans a statement that reads no data source but must see the time or other
        // volatile state (`SELECT now()`) only when it runs it: then the plan is judged at the
        // start of execution instead, which [`Engine::ensure_plan_judged`] confirms.
        self.prepared_since.set(before);
        if verdict.shown_tables < query.facts().shows_by_name {
            let refused = refusals::denied("SHOW <setting>", functions::READS_SETTINGS);
            return Err(plan_check::Refused::Because(refused.into()).into_error(verdict.privacy));
        }
        Ok(stmt)
    }

    /// Fail closed unless, since the last [`Engine::prepare_checked`] began, DuckDB showed the plan check
    /// both its plans for the statement: when it prepared it, or when it bound it again to start
    /// running it. Call once execution has started and before any row is read: a statement
    /// whose plan nobody judged (DuckDB's optimizer switched off, which the locked configuration
    /// and every check of the SQL keep from happening) is stopped there.
    pub(super) fn ensure_plan_judged(&self) -> Result<(), Failure> {
        if !self.judge.serving() {
            return Ok(());
        }
        let (bound, optimized) = self.prepared_since.get();
        if self.armed.plans_judged(Phase::Bound) > bound
            && self.armed.plans_judged(Phase::Optimized) > optimized
        {
            return Ok(());
        }
        let privacy = self.privacy.is_some();
        Err(plan_check::Refused::Unknown(
            "a statement DuckDB ran without showing its plan".to_owned(),
        )
        .into_error(privacy))
    }

    /// Run one checked statement, streaming at most `limit + 1` rows and `max_bytes` of JSON
    /// row data.
    pub fn run_query(
        &mut self,
        query: &CheckedQuery,
        limit: usize,
        max_bytes: usize,
    ) -> Result<QueryResult, Failure> {
        self.ensure_lock_held()?;
        let memory = self.memory;
        let judge = self.judge.clone();
        let query_error = |e: &duckdb::Error| memory.explain(judge.error_for(e));
        let started = Instant::now();
        let mut stmt = self.prepare_checked(query).map_err(|e| memory.explain(e))?;
        let declared: Vec<ColumnType> = (0..stmt.column_count())
            .map(|i| ColumnType::from_duckdb(&stmt.column_logical_type(i), None))
            .collect();
        // DuckDB's own names of the result's types (`ENUM('a', 'b')`, `STRUCT("inner" INTEGER)`),
        // from the optimized plan the judge was shown, when DuckDB planned the statement as it
        // prepared it (one that reads no table is planned when it runs: see below).
        let duckdb_types = |types: Option<Vec<String>>| {
            types.filter(|types: &Vec<String>| types.len() == declared.len())
        };
        let prepared_types = duckdb_types(self.judge.result_types());
        let twins: Vec<Option<ColumnType>> = declared.iter().map(ColumnType::decodable).collect();
        // Columns the client library cannot decode faithfully are rendered by DuckDB itself: the
        // statement runs inside one that casts those columns (see `RenderedQuery`).
        let rendered = if twins.iter().any(Option::is_some) {
            drop(stmt);
            let rendered = self.rendered_query(query, &declared, &twins)?;
            stmt = self
                .prepare_checked(&rendered.query)
                .map_err(|e| memory.explain(e))?;
            Some(rendered)
        } else {
            None
        };
        // DuckDB quotes a STRUCT or UNION member named like any of its keywords (`"inner"`,
        // `"year"`); its own spelling of such a column's type is taken from DESCRIBE, before the
        // result opens (a connection with an open result prepares nothing else).
        let described = match &rendered {
            None if prepared_types.is_none()
                && declared.iter().any(ColumnType::has_named_members) =>
            {
                self.described_columns(query)
                    .ok()
                    .filter(|described| described.len() == declared.len())
            }
            _ => None,
        };
        // Streaming execution: DuckDB produces chunks as we fetch them, so stopping early stops
        // the work (a plain `query` would materialise the whole result first).
        drop(stmt.stream_arrow([]).map_err(|e| query_error(&e))?);
        self.ensure_plan_judged()?;
        // The types of the plan that runs: planned at prepare, or now that it has started.
        let duckdb_types = match &rendered {
            Some(_) => None,
            None => prepared_types.or_else(|| duckdb_types(self.judge.result_types())),
        };

        let column_count = stmt.column_count();
        let mut types = Vec::with_capacity(column_count);
        let mut columns = Vec::with_capacity(column_count);
        for i in 0..column_count {
            let arrow = stmt.column_type(i);
            let ty = ColumnType::from_duckdb(&stmt.column_logical_type(i), Some(&arrow));
            let meta = match &rendered {
                Some(rendered) => rendered
                    .columns
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| ColumnMeta {
                        name: String::new(),
                        data_type: ty.type_name(),
                    }),
                None => ColumnMeta {
                    name: stmt.column_name(i).cloned().unwrap_or_default(),
                    data_type: duckdb_types
                        .as_ref()
                        .and_then(|types| types.get(i))
                        .or_else(|| {
                            described
                                .as_ref()
                                .and_then(|d| d.get(i))
                                .map(|d| &d.data_type)
                        })
                        .cloned()
                        .unwrap_or_else(|| ty.type_name()),
                },
            };
            columns.push(meta);
            types.push(twins.get(i).cloned().flatten().unwrap_or(ty));
        }

        let mut rows: Vec<Vec<Json>> = Vec::new();
        let mut bytes = 0usize;
        let mut truncated = false;
        // TIMESTAMPTZ values in the operator's zone, looked up beside the streaming result.
        let mut zone = LocalTime::new(&self.time_zone, &self.conn);
        // The crate panics on a few Arrow shapes it does not know; a panic here must become an
        // error for this call, not a dead worker with no reply.
        let fetched = catch_unwind(AssertUnwindSafe(|| -> Result<(), Failure> {
            let mut cursor = stmt.raw_query();
            while let Some(row) = cursor.next().map_err(|e| query_error(&e))? {
                if rows.len() >= limit {
                    truncated = true;
                    break;
                }
                let mut values = Vec::with_capacity(column_count);
                for (i, ty) in types.iter().enumerate() {
                    // A bare `NULL` column has Arrow type Null, which the crate cannot read.
                    if ty.is_null_type() {
                        values.push(Json::Null);
                        continue;
                    }
                    let value = row.get_ref(i).map_err(|e| query_error(&e))?.to_owned();
                    values.push(convert::to_json_in(&value, Some(ty), &mut zone));
                }
                // Rows are joined by commas in a JSON array.
                let size = json_size(&values) + usize::from(!rows.is_empty());
                if bytes + size > max_bytes {
                    truncated = true;
                    break;
                }
                bytes += size;
                rows.push(values);
            }
            Ok(())
        }));
        match fetched {
            Ok(result) => result?,
            Err(_) => {
                return Err(worker_error(
                    ErrorKind::DatabaseError,
                    "A result value could not be converted. Cast unusual columns to VARCHAR.",
                ));
            }
        }
        // The statement borrows the connection (a cached one would go back to its cache) until
        // it is dropped; the rows are all read.
        drop(stmt);
        let duration_ms = self.pending_attach_ms + started.elapsed().as_secs_f64() * 1e3;
        self.pending_attach_ms = 0.0;
        Ok(QueryResult {
            columns,
            row_count: rows.len(),
            rows,
            truncated,
            duration_ms,
        })
    }

    /// `query` inside a statement that has DuckDB cast each column in `twins` to its decodable
    /// twin, with the names and DuckDB's type names of the original columns. The statement is
    /// built from DuckDB's rendering of the checked query and checked again before it runs.
    fn rendered_query(
        &mut self,
        query: &CheckedQuery,
        declared: &[ColumnType],
        twins: &[Option<ColumnType>],
    ) -> Result<RenderedQuery, Failure> {
        let cannot_render = |detail: &str| {
            let rendered = twins
                .iter()
                .zip(declared)
                .enumerate()
                .find_map(|(i, (twin, ty))| twin.as_ref().map(|_| (i, ty)));
            let Some((i, ty)) = rendered.or_else(|| declared.first().map(|ty| (0, ty))) else {
                return worker_error(
                    ErrorKind::DatabaseError,
                    format!("DuckDB could not render this statement's result ({detail})."),
                );
            };
            worker_error(
                ErrorKind::DatabaseError,
                format!(
                    "Result column {} has type {}, which duckgate returns by having DuckDB \
                     render it, and DuckDB could not do that for this statement ({detail}). \
                     Cast that column to text in the query, e.g. column_name::VARCHAR.",
                    i + 1,
                    ty.type_name()
                ),
            )
        };
        // Names and DuckDB's type names of the original columns (the crate gives names only once
        // a statement has run).
        let columns = self
            .described_columns(query)
            .map_err(|e| cannot_render(e.message.lines().next().unwrap_or_default()))?;
        if columns.len() != declared.len() {
            return Err(cannot_render("DESCRIBE gave another number of columns"));
        }
        let aliases: Vec<String> = (1..=declared.len())
            .map(|i| crate::sql_text::quote_identifier(&format!("c{i}")))
            .collect();
        let select: Vec<String> = aliases
            .iter()
            .zip(twins)
            .map(|(alias, twin)| match twin {
                Some(twin) => format!("CAST({alias} AS {})", twin.cast_target()),
                None => alias.clone(),
            })
            .collect();
        let rendered = self.derived(query, |body| {
            format!(
                "SELECT {} FROM (\n{body}\n) AS rendered({})",
                select.join(", "),
                aliases.join(", ")
            )
        })?;
        Ok(RenderedQuery {
            query: rendered,
            columns,
        })
    }

    /// The result columns of `query` as DuckDB describes them: names and DuckDB's type names.
    /// DuckDB binds the query to describe it; nothing runs.
    fn described_columns(&self, query: &CheckedQuery) -> Result<Vec<ColumnMeta>, Failure> {
        let describe = self.derived(query, |body| format!("DESCRIBE {body}"))?;
        let mut stmt = self.prepare_checked(&describe)?;
        let rows = stmt
            .query_map([], |row| {
                Ok(ColumnMeta {
                    name: row.get(0)?,
                    data_type: row.get(1)?,
                })
            })
            .map_err(|e| query_error(&e))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(|e| query_error(&e))
    }

    /// DuckDB's plan for `query` as JSON (`EXPLAIN (FORMAT JSON)`).
    pub fn explain(&mut self, query: &CheckedQuery) -> Result<ExplainResult, Failure> {
        // Built from DuckDB's syntax tree of the one SELECT the checks read (the explained query
        // of an `EXPLAIN`, the `SELECT` a `CALL` binds as), never by prefixing the agent's
        // text: what follows `EXPLAIN (FORMAT JSON)` is exactly the statement DuckDB parsed.
        let explain = self.derived(query, |select| format!("EXPLAIN (FORMAT JSON) {select}"))?;
        let result = self.run_query(&explain, 16, 16 * 1024 * 1024)?;
        let mut plans = serde_json::Map::new();
        for row in &result.rows {
            let (Some(Json::String(key)), Some(Json::String(value))) = (row.first(), row.get(1))
            else {
                continue;
            };
            let parsed =
                serde_json::from_str(value).unwrap_or_else(|_| Json::String(value.clone()));
            plans.insert(key.clone(), parsed);
        }
        let plan = match plans.len() {
            0 => {
                return Err(worker_error(
                    ErrorKind::DatabaseError,
                    "DuckDB returned no plan.",
                ));
            }
            1 => plans
                .into_iter()
                .next()
                .map(|(_, v)| v)
                .unwrap_or(Json::Null),
            _ => Json::Object(plans),
        };
        let mut plan = plan;
        if let Some(shadow) = &self.shadow {
            shadow.scrub_json(&mut plan);
        }
        Ok(ExplainResult { plan })
    }

    /// Under privacy rules, an error as the agent may see it, composed from what the failure's
    /// typed fields say: a "not found" error in words that depend only on the name the query
    /// wrote (`privacy::unknown_name_failure`), so a hidden name and a made-up one fail alike;
    /// DuckDB's words about something other than the query (its [`MessageOrigin`]) replaced by
    /// a sentence naming nothing; and in the rest the private name of the database replaced by
    /// its public one. Without rules, the error as is.
    pub fn private_error(&self, error: Failure) -> Failure {
        let Some(shadow) = &self.shadow else {
            return error;
        };
        if error.kind == ErrorKind::UnknownName {
            return crate::privacy::unknown_name_failure(error.missing.as_ref());
        }
        match error.origin {
            MessageOrigin::DuckdbAboutItself => Failure {
                kind: error.kind,
                ..crate::privacy::unnamed_failure()
            },
            MessageOrigin::Duckgate | MessageOrigin::DuckdbAboutTheQuery => Failure {
                message: shadow.scrub(&error.message),
                construct: error.construct.map(|c| shadow.scrub(&c)),
                suggestion: error.suggestion.map(|s| shadow.scrub(&s)),
                ..error
            },
        }
    }

    /// Under privacy rules, a result as the agent may see it: no column name, type or value
    /// carries the database's private name (none should: catalog listings are refused).
    pub fn private_result(&self, mut result: QueryResult) -> QueryResult {
        let Some(shadow) = &self.shadow else {
            return result;
        };
        for column in &mut result.columns {
            column.name = shadow.scrub(&column.name);
            column.data_type = shadow.scrub(&column.data_type);
        }
        for row in &mut result.rows {
            for cell in row.iter_mut() {
                shadow.scrub_json(cell);
            }
        }
        result
    }
}

impl Engine {
    /// Under privacy rules, a chart's data as it may be drawn and described: no axis title or
    /// category carries the database's private name (it is drawn into the picture, where no
    /// reply scrubbing could reach it).
    pub fn private_plot_data(&self, mut data: crate::plot::PlotData) -> crate::plot::PlotData {
        let Some(shadow) = &self.shadow else {
            return data;
        };
        data.x_label = shadow.scrub(&data.x_label);
        data.y_label = shadow.scrub(&data.y_label);
        for x in &mut data.x {
            if let crate::plot::XValue::Category(text) = x {
                *text = shadow.scrub(text);
            }
        }
        data
    }
}

/// A statement rewritten so DuckDB renders the columns the client library cannot decode.
struct RenderedQuery {
    query: CheckedQuery,
    /// The original statement's columns, as DuckDB names and types them.
    columns: Vec<ColumnMeta>,
}
