//! The `FROM` clause: joins, table factors, table functions and relation names.

use sqlparser::ast::{
    Function, FunctionArg, FunctionArgumentList, FunctionArguments, Ident, Join, JoinConstraint,
    JoinOperator, ObjectName, ObjectNamePart, PivotValueSource, TableAlias, TableFactor,
    TableFunctionArgs, TableSample, TableSampleKind, TableWithJoins,
};

use super::{Walk, Walker, lower, push_unique};
use crate::validate::functions::{self, RowSource, SystemView, TableUse};
use crate::validate::refusals::{
    denied, file_relation, looks_like_path, names_a_data_file, no_declared_folders,
    table_function_not_allowed, unknown_relation, unsupported,
};

impl Walker<'_> {
    pub(super) fn table_with_joins(&mut self, table: &TableWithJoins) -> Walk {
        let TableWithJoins { relation, joins } = table;
        self.table_factor(relation)?;
        for Join {
            relation,
            global: _,
            join_operator,
        } in joins
        {
            self.table_factor(relation)?;
            let constraint = match join_operator {
                JoinOperator::Join(c)
                | JoinOperator::Inner(c)
                | JoinOperator::Left(c)
                | JoinOperator::LeftOuter(c)
                | JoinOperator::Right(c)
                | JoinOperator::RightOuter(c)
                | JoinOperator::FullOuter(c)
                | JoinOperator::CrossJoin(c)
                | JoinOperator::Semi(c)
                | JoinOperator::LeftSemi(c)
                | JoinOperator::RightSemi(c)
                | JoinOperator::Anti(c)
                | JoinOperator::LeftAnti(c)
                | JoinOperator::RightAnti(c) => c,
                JoinOperator::AsOf { .. } => {
                    return Err(unsupported(
                        "ASOF JOIN ... MATCH_CONDITION",
                        "use DuckDB's ASOF JOIN ... ON syntax or a window function",
                    ));
                }
                JoinOperator::CrossApply
                | JoinOperator::OuterApply
                | JoinOperator::StraightJoin(_)
                | JoinOperator::ArrayJoin
                | JoinOperator::LeftArrayJoin
                | JoinOperator::InnerArrayJoin => {
                    return Err(unsupported(
                        "this join type",
                        "use JOIN, LEFT JOIN or LATERAL",
                    ));
                }
            };
            match constraint {
                JoinConstraint::On(expr) => self.expr(expr)?,
                JoinConstraint::Using(_) | JoinConstraint::Natural | JoinConstraint::None => {}
            }
        }
        Ok(())
    }

    fn table_factor(&mut self, factor: &TableFactor) -> Walk {
        self.descend()?;
        match factor {
            TableFactor::Table {
                name,
                alias,
                args,
                with_hints,
                version,
                with_ordinality: _,
                partitions,
                json_path,
                sample,
                index_hints,
            } => {
                if !with_hints.is_empty() || !index_hints.is_empty() {
                    return Err(unsupported("table hints", "remove them"));
                }
                if version.is_some() {
                    return Err(unsupported(
                        "time travel (AT / FOR SYSTEM_TIME)",
                        "remove it",
                    ));
                }
                if !partitions.is_empty() {
                    return Err(unsupported("PARTITION (...)", "filter with WHERE instead"));
                }
                if json_path.is_some() {
                    return Err(unsupported(
                        "a JSON path on a table",
                        "use -> / ->> instead",
                    ));
                }
                match args {
                    None => self.relation(name)?,
                    Some(TableFunctionArgs { args, settings }) => {
                        if settings.is_some() {
                            return Err(unsupported("SETTINGS", "remove the SETTINGS clause"));
                        }
                        self.table_function(name, args)?;
                    }
                }
                self.table_alias(alias.as_ref())?;
                self.sample(sample.as_ref())?;
            }
            TableFactor::Derived {
                lateral: _,
                subquery,
                alias,
                sample,
            } => {
                self.query(subquery)?;
                self.table_alias(alias.as_ref())?;
                self.sample(sample.as_ref())?;
            }
            TableFactor::Function {
                lateral: _,
                name,
                args,
                with_ordinality: _,
                alias,
            } => {
                self.table_function(name, args)?;
                self.table_alias(alias.as_ref())?;
            }
            TableFactor::UNNEST {
                alias,
                array_exprs,
                with_offset: _,
                with_offset_alias: _,
                with_ordinality: _,
            } => {
                push_unique(&mut self.functions, "unnest".into());
                self.exprs(array_exprs)?;
                self.table_alias(alias.as_ref())?;
            }
            TableFactor::NestedJoin {
                table_with_joins,
                alias,
            } => {
                self.table_with_joins(table_with_joins)?;
                self.table_alias(alias.as_ref())?;
            }
            TableFactor::TableFunction { .. } => {
                return Err(unsupported(
                    "TABLE(...)",
                    "call the table function directly in FROM",
                ));
            }
            TableFactor::Pivot {
                table,
                aggregate_functions,
                value_column,
                value_source,
                default_on_null,
                alias,
            } => {
                self.table_factor(table)?;
                self.exprs_with_aliases(aggregate_functions)?;
                self.exprs(value_column)?;
                // DuckDB's grammar has neither `IN ANY` nor `IN (subquery)` in this form (a
                // syntax error there): what they hold is checked, and DuckDB's parser answers.
                match value_source {
                    PivotValueSource::List(values) => self.exprs_with_aliases(values)?,
                    PivotValueSource::Any(order_by) => self.order_by_exprs(order_by)?,
                    PivotValueSource::Subquery(query) => self.query(query)?,
                }
                self.opt_expr(default_on_null.as_ref())?;
                self.table_alias(alias.as_ref())?;
            }
            TableFactor::Unpivot {
                table,
                // The names of the two new columns, not references.
                value: _,
                name: _,
                columns,
                null_inclusion: _,
                alias,
            } => {
                self.table_factor(table)?;
                self.exprs_with_aliases(columns)?;
                self.table_alias(alias.as_ref())?;
            }
            TableFactor::JsonTable { .. }
            | TableFactor::OpenJsonTable { .. }
            | TableFactor::XmlTable { .. } => {
                return Err(unsupported(
                    "JSON_TABLE / OPENJSON / XMLTABLE",
                    "use json_each() or ->> instead",
                ));
            }
            TableFactor::MatchRecognize { .. } => {
                return Err(unsupported(
                    "MATCH_RECOGNIZE",
                    "use window functions instead",
                ));
            }
            TableFactor::UnpivotExpr { .. } | TableFactor::SemanticView { .. } => {
                return Err(unsupported(
                    "this FROM clause",
                    "select from a table, a CTE or a subquery",
                ));
            }
        }
        self.depth -= 1;
        Ok(())
    }

    fn table_alias(&mut self, alias: Option<&TableAlias>) -> Walk {
        if let Some(TableAlias {
            explicit: _,
            name: _,
            columns: _,
            at,
        }) = alias
            && at.is_some()
        {
            return Err(unsupported("AT in a table alias", "remove it"));
        }
        Ok(())
    }

    fn sample(&mut self, sample: Option<&TableSampleKind>) -> Walk {
        let sample = match sample {
            None => return Ok(()),
            Some(TableSampleKind::BeforeTableAlias(s) | TableSampleKind::AfterTableAlias(s)) => s,
        };
        let TableSample {
            modifier: _,
            name: _,
            quantity,
            seed: _,
            bucket,
            offset,
        } = sample.as_ref();
        if bucket.is_some() {
            return Err(unsupported(
                "TABLESAMPLE BUCKET",
                "sample by percentage or rows",
            ));
        }
        if let Some(quantity) = quantity {
            self.expr(&quantity.value)?;
        }
        self.opt_expr(offset.as_ref())
    }

    /// `CALL f(…)`: DuckDB binds it as `SELECT * FROM f(…)`, so it is that table function call,
    /// with nothing a table function in `FROM` could not have.
    pub(crate) fn call_statement(&mut self, function: &Function) -> Walk {
        let Function {
            name,
            uses_odbc_syntax,
            parameters,
            args,
            within_group,
            filter,
            null_treatment,
            over,
        } = function;
        let plain = !*uses_odbc_syntax
            && matches!(parameters, FunctionArguments::None)
            && within_group.is_empty()
            && filter.is_none()
            && null_treatment.is_none()
            && over.is_none();
        let args: &[FunctionArg] = match args {
            FunctionArguments::List(FunctionArgumentList {
                duplicate_treatment: None,
                args,
                clauses,
            }) if plain && clauses.is_empty() => args,
            _ => {
                return Err(unsupported(
                    "this form of CALL",
                    "call a table function with its arguments: CALL range(10)",
                ));
            }
        };
        self.table_function(name, args)
    }

    /// A table function call in `FROM`: allowlisted names only.
    fn table_function(&mut self, name: &ObjectName, args: &[FunctionArg]) -> Walk {
        let called = self.function_name(name)?;
        match functions::table_use(&called) {
            TableUse::Refused(denial) => return Err(denied(&called, denial)),
            TableUse::PlanOnly => return Err(table_function_not_allowed(&called)),
            // The database's own table macro (the worker's plan check sees its body expanded),
            // or nothing: when the catalog lists the stored table macros, a name that is none
            // of them is refused here (`write_csv(…)` does not exist); else DuckDB's binder
            // decides.
            TableUse::NotBuiltIn => {
                if let Some(macros) = &self.catalog.table_macros
                    && !called.eq_ignore_ascii_case("values")
                    && !macros.iter().any(|m| m.eq_ignore_ascii_case(&called))
                {
                    return Err(table_function_not_allowed(&called));
                }
            }
            TableUse::Allowed(RowSource::Catalog) => {
                self.check_catalog_listing(&format!("{called}()"))?
            }
            TableUse::Allowed(RowSource::DeclaredFolders) => {
                if self.catalog.folders.is_empty() {
                    return Err(no_declared_folders(&called));
                }
            }
            TableUse::Allowed(RowSource::Arguments | RowSource::Constant) => {}
        }
        push_unique(&mut self.functions, called);
        self.function_args(args)
    }

    /// A relation named in `FROM` (or `TABLE t`, `DESCRIBE t`, `SHOW t`): a CTE in scope, a
    /// catalog table or view (also as `db.t` or `db.schema.t`, `db` being the database's attach
    /// name), or one of DuckDB's system views. Never a file.
    pub(crate) fn relation(&mut self, name: &ObjectName) -> Walk {
        let mut parts = Vec::with_capacity(name.0.len());
        for part in &name.0 {
            match part {
                ObjectNamePart::Identifier(ident) => {
                    if ident.quote_style == Some('\'') {
                        if name.0.len() == 1 && self.catalog.in_declared_folder(&ident.value) {
                            return Ok(());
                        }
                        return Err(file_relation(&ident.value));
                    }
                    parts.push(ident);
                }
                ObjectNamePart::Function(_) => {
                    return Err(unsupported(
                        "a function call inside a table name",
                        "name a table",
                    ));
                }
            }
        }
        let written = name.to_string();
        match parts.as_slice() {
            [table] => {
                let table_name = lower(table);
                if self.ctes.contains(&table_name) {
                    return Ok(());
                }
                if let Some(found) = self.catalog.find(None, None, &table.value) {
                    self.read_catalog_relation(found);
                    return Ok(());
                }
                if let Some(view) = functions::system_view(None, &table.value) {
                    // Unqualified, DuckDB looks in `main`, then in `pg_catalog`.
                    let schema = match functions::system_view(Some("main"), &table.value) {
                        Some(_) => "main",
                        None => "pg_catalog",
                    };
                    return self.system_view(view, &table.value, format!("{schema}.{table_name}"));
                }
                if self.catalog.in_declared_folder(&table.value) {
                    return Ok(());
                }
                if looks_like_path(&table.value) {
                    return Err(file_relation(&table.value));
                }
                let mut refusal = unknown_relation(&written);
                // The same name in another schema or database: DuckDB only searches the default
                // database's `main` unqualified.
                if let Some(other) = self
                    .catalog
                    .relations
                    .iter()
                    .find(|r| r.name.eq_ignore_ascii_case(&table.value))
                {
                    refusal.suggestion = if other.database.is_empty()
                        || other.database.eq_ignore_ascii_case(&self.catalog.database)
                    {
                        format!(
                            "Qualify it with its schema: {}.{}.",
                            other.schema, other.name
                        )
                    } else {
                        format!(
                            "Qualify it with its database and schema: {}.{}.{}.",
                            other.database, other.schema, other.name
                        )
                    };
                }
                Err(refusal)
            }
            [schema, table] => {
                if let Some(found) = self.catalog.find(None, Some(&schema.value), &table.value) {
                    self.read_catalog_relation(found);
                    return Ok(());
                }
                // `db.t`: DuckDB tries `db` as a schema first, then as a catalog (its `main`).
                if self.is_database(schema)
                    && let Some(found) = self.catalog.find(Some(&schema.value), None, &table.value)
                {
                    self.read_catalog_relation(found);
                    return Ok(());
                }
                let schema_name = lower(schema);
                let table_name = lower(table);
                if let Some(view) = functions::system_view(Some(&schema.value), &table.value) {
                    return self.system_view(view, &written, format!("{schema_name}.{table_name}"));
                }
                if looks_like_path(&schema.value)
                    || looks_like_path(&table.value)
                    || names_a_data_file(&schema.value, &table.value)
                {
                    return Err(file_relation(&written));
                }
                Err(unknown_relation(&written))
            }
            // Only the attached databases' own relations may be named with a catalog: `system`,
            // `temp` and `memory` hold DuckDB's views and the session's state.
            [catalog, schema, table] if self.is_database(catalog) => {
                self.relation_in_schema(&parts, Some(catalog), schema, table, &written)
            }
            // `a.b.t` with `a` no catalog: DuckDB 2.0 reads it as the table `t` of the nested
            // schema `a.b` of the default database (`db.a.b.t` with a catalog written). The
            // catalog lists a nested schema by its own name, `b`; `main` is the top-level schema
            // (so `other.main.t` names another catalog, none of which a query may read unless
            // it is a database). Under privacy rules only a database's own name is taken as a
            // catalog.
            [parent, schema, table] | [_, parent, schema, table]
                if (parts.len() == 3
                    || parts.first().is_some_and(|first| self.is_database(first)))
                    && !self.catalog.restricted
                    && !is_builtin_catalog(parent)
                    && !schema.value.eq_ignore_ascii_case("main")
                    && !looks_like_path(&parent.value) =>
            {
                let database = parts.first().copied().filter(|_| parts.len() == 4);
                self.relation_in_schema(&parts, database, schema, table, &written)
            }
            _ => {
                if parts.iter().any(|p| looks_like_path(&p.value)) {
                    return Err(file_relation(&written));
                }
                Err(unknown_relation(&written))
            }
        }
    }

    /// The relation `schema.table` of `database` (`None`: the default), named with the
    /// `parts` written: a file when it is none and some part looks like a path.
    fn relation_in_schema(
        &mut self,
        parts: &[&Ident],
        database: Option<&Ident>,
        schema: &Ident,
        table: &Ident,
        written: &str,
    ) -> Walk {
        let database = database.map(|d| d.value.as_str());
        match self
            .catalog
            .find(database, Some(&schema.value), &table.value)
        {
            Some(found) => {
                self.read_catalog_relation(found);
                Ok(())
            }
            None if parts.iter().any(|p| looks_like_path(&p.value)) => Err(file_relation(written)),
            None => Err(unknown_relation(written)),
        }
    }

    /// Whether `part` names an attached database (its catalog name, ASCII case-insensitive).
    fn is_database(&self, part: &Ident) -> bool {
        self.catalog.is_database(&part.value)
    }

    /// Record a catalog relation (`schema.name`) read.
    fn read_catalog_relation(&mut self, found: String) {
        push_unique(&mut self.relations, found);
    }

    /// One of DuckDB's system views, by the policy table: settings views are refused, catalog
    /// listings are refused under privacy rules, `recorded` is what the statement reads.
    fn system_view(&mut self, view: SystemView, written: &str, recorded: String) -> Walk {
        match view {
            SystemView::Denied(denial) => Err(denied(written, denial)),
            SystemView::Catalog => {
                self.check_catalog_listing(written)?;
                push_unique(&mut self.relations, recorded);
                Ok(())
            }
            SystemView::Constant => {
                push_unique(&mut self.relations, recorded);
                Ok(())
            }
        }
    }
}

/// DuckDB's own catalogs: its views and functions (`system`), the session's objects (`temp`)
/// and the default in-memory database (`memory`). None holds a schema of the database.
fn is_builtin_catalog(part: &Ident) -> bool {
    ["system", "temp", "memory"]
        .iter()
        .any(|builtin| part.value.eq_ignore_ascii_case(builtin))
}
