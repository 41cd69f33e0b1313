//! The syntax-tree walk: every query, relation, function and expression of an accepted statement.
//!
//! Matches are exhaustive (no `_ =>`) over every enum that can carry a relation, a function or a
//! sub-query, and structs are destructured field by field, so a sqlparser upgrade that adds a
//! variant or a field stops the build here instead of slipping through. Constructs DuckDB does not
//! have (other dialects' syntax) are refused rather than walked: fewer paths, fewer surprises.
//!
//! Besides deciding, the walk records what the statement touches (catalog relations, functions).
//! Column references and expansions (`*`, `t.*`, `COLUMNS(...)`, whole rows) decide nothing here:
//! under privacy rules the worker's shadow catalog has no hidden table and no hidden column, so
//! DuckDB resolves them against the visible columns only, and a hidden name fails there exactly
//! like a made-up one.

use sqlparser::ast::{
    AccessExpr, Cte, Distinct, Expr, ExprWithAlias, Fetch, Function, FunctionArg, FunctionArgExpr,
    FunctionArgumentClause, FunctionArgumentList, FunctionArguments, GroupByExpr,
    GroupByWithModifier, Ident, Join, JoinConstraint, JoinOperator, JsonPathElem, LambdaFunction,
    LimitClause, ListAggOnOverflow, NamedWindowDefinition, NamedWindowExpr, ObjectName,
    ObjectNamePart, Offset, OrderBy, OrderByExpr, OrderByKind, PivotValueSource, Query,
    ReplaceSelectItem, Select, SelectItem, SelectItemQualifiedWildcardKind, SetExpr, SetOperator,
    SetQuantifier, Subscript, TableAlias, TableFactor, TableFunctionArgs, TableSample,
    TableSampleKind, TableWithJoins, Value, Values, WildcardAdditionalOptions, WindowFrame,
    WindowFrameBound, WindowSpec, WindowType, With,
};

use super::functions::{self, RowSource, SystemView};
pub(crate) use super::refusals::unsupported;
use super::refusals::{
    catalog_listing, denied, file_relation, looks_like_path, names_a_data_file, policy_blocked,
    table_function_not_allowed, unknown_relation,
};
use super::{Catalog, Policy, Refusal};
use crate::error::ErrorKind;

/// Walks one statement, deciding and recording.
pub(crate) struct Walker<'a> {
    catalog: &'a Catalog,
    max_depth: usize,
    depth: usize,
    /// CTE names visible at this point (lower case), innermost last.
    ctes: Vec<String>,
    /// Relations read, as `schema.name`, in first-seen order.
    pub(crate) relations: Vec<String>,
    /// Functions called (lower case), in first-seen order.
    pub(crate) functions: Vec<String>,
}

type Walk = Result<(), Refusal>;

/// A column that does not exist in the catalog (hidden columns are not in it).
pub(crate) fn unknown_column(name: &str) -> Refusal {
    Refusal {
        kind: ErrorKind::UnknownName,
        message: format!("Column {name} does not exist in this database."),
        construct: name.into(),
        suggestion: "Check the column names with describe_table.".into(),
    }
}

/// A name as DuckDB folds it: ASCII letters only (U+212A KELVIN SIGN is not `k`).
fn lower(ident: &Ident) -> String {
    ident.value.to_ascii_lowercase()
}

/// Whether DuckDB makes `WITH RECURSIVE x AS (left <op> right)` a recursive CTE, in which `x`
/// names the CTE inside `right`. DuckDB 2.0 does so for `UNION` and `UNION ALL` only: with
/// `UNION [ALL] BY NAME`, `EXCEPT` or `INTERSECT`, `x` in the body is whatever it means outside
/// (measured with `duckdb` 2.0.0). Answering `true` wrongly would skip the check of a relation,
/// so every other shape answers `false`.
fn makes_recursive_cte(op: &SetOperator, quantifier: &SetQuantifier) -> bool {
    let union = match op {
        SetOperator::Union => true,
        SetOperator::Except | SetOperator::Intersect | SetOperator::Minus => false,
    };
    let by_position = match quantifier {
        SetQuantifier::All | SetQuantifier::Distinct | SetQuantifier::None => true,
        SetQuantifier::ByName | SetQuantifier::AllByName | SetQuantifier::DistinctByName => false,
    };
    union && by_position
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

impl<'a> Walker<'a> {
    pub(crate) fn new(catalog: &'a Catalog, policy: &Policy) -> Walker<'a> {
        Walker {
            catalog,
            max_depth: policy.max_expression_depth,
            depth: 0,
            ctes: Vec::new(),
            relations: Vec::new(),
            functions: Vec::new(),
        }
    }

    // ----- privacy ---------------------------------------------------------------

    /// Catalog listings (`information_schema`, `duckdb_tables()`, `SHOW TABLES`, …) would show
    /// hidden names: refused whenever any privacy rule is set.
    pub(crate) fn check_catalog_listing(&self, construct: &str) -> Walk {
        if !self.catalog.restricted {
            return Ok(());
        }
        Err(catalog_listing(construct))
    }

    fn descend(&mut self) -> Walk {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(Refusal {
                kind: ErrorKind::InvalidArgument,
                message: format!(
                    "The query's expressions nest deeper than {} levels.",
                    self.max_depth
                ),
                construct: "nesting".into(),
                suggestion: "Simplify the expression, e.g. use IN (...) instead of long OR chains."
                    .into(),
            });
        }
        Ok(())
    }

    // ----- queries -------------------------------------------------------------------------

    pub(crate) fn query(&mut self, query: &Query) -> Walk {
        self.query_in(query, None)
    }

    /// A query; `recursive` names the CTE it is the body of, when that CTE is written in a
    /// `WITH RECURSIVE` (see [`Walker::set_expr_in`]).
    fn query_in(&mut self, query: &Query, recursive: Option<&str>) -> Walk {
        self.descend()?;
        let Query {
            with,
            body,
            order_by,
            limit_clause,
            fetch,
            locks,
            for_clause,
            settings,
            format_clause,
            pipe_operators,
        } = query;
        if !locks.is_empty() {
            return Err(unsupported(
                "FOR UPDATE / FOR SHARE",
                "remove the locking clause",
            ));
        }
        if for_clause.is_some() {
            return Err(unsupported(
                "FOR XML / FOR JSON",
                "use DuckDB's to_json() instead",
            ));
        }
        if settings.is_some() {
            return Err(unsupported("SETTINGS", "remove the SETTINGS clause"));
        }
        if format_clause.is_some() {
            return Err(unsupported("FORMAT", "remove the FORMAT clause"));
        }
        if !pipe_operators.is_empty() {
            return Err(unsupported("|> pipe syntax", "write a plain SELECT"));
        }
        let scope_mark = self.ctes.len();
        if let Some(with) = with {
            self.with(with)?;
        }
        self.set_expr_in(body, recursive)?;
        if let Some(order_by) = order_by {
            self.order_by(order_by)?;
        }
        if let Some(limit) = limit_clause {
            self.limit(limit)?;
        }
        if let Some(Fetch {
            with_ties: _,
            percent: _,
            quantity,
        }) = fetch
        {
            self.opt_expr(quantity.as_ref())?;
        }
        self.ctes.truncate(scope_mark);
        self.depth -= 1;
        Ok(())
    }

    fn with(&mut self, with: &With) -> Walk {
        let With {
            with_token: _,
            recursive,
            cte_tables,
        } = with;
        for cte in cte_tables {
            let Cte {
                alias,
                query,
                from,
                materialized: _,
                closing_paren_token: _,
            } = cte;
            if from.is_some() {
                return Err(unsupported("CTE ... FROM", "remove the FROM after the CTE"));
            }
            let name = lower(&alias.name);
            // A CTE is visible to the CTEs after it and to the query's body. Inside its own
            // body its name means whatever it means outside (a catalog relation, an outer CTE,
            // a file for DuckDB's replacement scans), so it is checked as such there; even
            // under `WITH RECURSIVE`, DuckDB binds it to the CTE itself only in the recursive
            // term of a UNION (see `set_expr_in`).
            self.query_in(query, recursive.then_some(name.as_str()))?;
            self.ctes.push(name);
        }
        Ok(())
    }

    fn set_expr(&mut self, body: &SetExpr) -> Walk {
        self.set_expr_in(body, None)
    }

    /// A query body; `recursive` names the CTE it is the body of under `WITH RECURSIVE`.
    fn set_expr_in(&mut self, body: &SetExpr, recursive: Option<&str>) -> Walk {
        self.descend()?;
        match body {
            SetExpr::Select(select) => self.select(select)?,
            // Parentheses around the body make no node of their own in DuckDB's grammar:
            // `((anchor UNION ALL recursive))` is still a recursive CTE.
            SetExpr::Query(query) => self.query_in(query, recursive)?,
            SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => match recursive.filter(|_| makes_recursive_cte(op, set_quantifier)) {
                // DuckDB's RECURSIVE_CTE_NODE: the name is the CTE itself in the recursive
                // (right) term only; in the anchor it is whatever it means outside.
                Some(name) => {
                    self.set_expr(left)?;
                    let scope_mark = self.ctes.len();
                    self.ctes.push(name.to_string());
                    self.set_expr(right)?;
                    self.ctes.truncate(scope_mark);
                }
                None => {
                    self.set_expr(left)?;
                    self.set_expr(right)?;
                }
            },
            SetExpr::Values(Values {
                explicit_row: _,
                value_keyword: _,
                rows,
            }) => {
                for row in rows {
                    self.exprs(&row.content)?;
                }
            }
            SetExpr::Insert(_) => return Err(super::write_refused("INSERT")),
            SetExpr::Update(_) => return Err(super::write_refused("UPDATE")),
            SetExpr::Delete(_) => return Err(super::write_refused("DELETE")),
            SetExpr::Merge(_) => return Err(super::write_refused("MERGE")),
            SetExpr::Table(table) => {
                let name = match &table.table_name {
                    Some(name) => name,
                    None => return Err(unsupported("TABLE without a name", "name a table")),
                };
                let mut parts = Vec::new();
                if let Some(schema) = &table.schema_name {
                    parts.push(Ident::new(schema));
                }
                parts.push(Ident::new(name));
                self.relation(&ObjectName::from(parts))?;
            }
        }
        self.depth -= 1;
        Ok(())
    }

    fn select(&mut self, select: &Select) -> Walk {
        let Select {
            select_token: _,
            optimizer_hints,
            distinct,
            select_modifiers,
            top,
            top_before_distinct: _,
            projection,
            exclude,
            into,
            from,
            lateral_views,
            prewhere,
            selection,
            connect_by,
            group_by,
            cluster_by,
            distribute_by,
            sort_by,
            having,
            named_window,
            qualify,
            window_before_qualify: _,
            value_table_mode,
            flavor: _,
        } = select;
        if into.is_some() {
            return Err(policy_blocked(
                "SELECT ... INTO",
                "SELECT ... INTO creates a table, and duckgate is read-only.".into(),
                "Remove the INTO clause; the result is returned to you directly.",
            ));
        }
        if !optimizer_hints.is_empty() {
            return Err(unsupported("optimizer hints", "remove the hint comment"));
        }
        if select_modifiers.is_some() {
            return Err(unsupported("MySQL SELECT modifiers", "remove them"));
        }
        if top.is_some() {
            return Err(unsupported("TOP", "use LIMIT instead"));
        }
        if exclude.is_some() {
            return Err(unsupported(
                "EXCLUDE after the select list",
                "write * EXCLUDE (...)",
            ));
        }
        if !lateral_views.is_empty() {
            return Err(unsupported("LATERAL VIEW", "use unnest() instead"));
        }
        if prewhere.is_some() {
            return Err(unsupported("PREWHERE", "use WHERE instead"));
        }
        if !connect_by.is_empty() {
            return Err(unsupported("CONNECT BY", "use WITH RECURSIVE instead"));
        }
        if !cluster_by.is_empty() || !distribute_by.is_empty() || !sort_by.is_empty() {
            return Err(unsupported(
                "CLUSTER/DISTRIBUTE/SORT BY",
                "use ORDER BY instead",
            ));
        }
        if value_table_mode.is_some() {
            return Err(unsupported(
                "SELECT AS STRUCT/VALUE",
                "use a struct literal instead",
            ));
        }
        for table in from {
            self.table_with_joins(table)?;
        }
        match distinct {
            None | Some(Distinct::All) | Some(Distinct::Distinct) => {}
            Some(Distinct::On(exprs)) => self.exprs(exprs)?,
        }
        for item in projection {
            self.select_item(item)?;
        }
        self.opt_expr(selection.as_ref())?;
        self.group_by(group_by)?;
        self.opt_expr(having.as_ref())?;
        for NamedWindowDefinition(_, window) in named_window {
            match window {
                NamedWindowExpr::NamedWindow(_) => {}
                NamedWindowExpr::WindowSpec(spec) => self.window_spec(spec)?,
            }
        }
        self.opt_expr(qualify.as_ref())?;
        Ok(())
    }

    fn select_item(&mut self, item: &SelectItem) -> Walk {
        match item {
            SelectItem::UnnamedExpr(expr) => self.expr(expr),
            SelectItem::ExprWithAlias { expr, alias: _ } => self.expr(expr),
            SelectItem::ExprWithAliases { .. } => Err(unsupported(
                "AS (alias, ...)",
                "alias each column separately",
            )),
            SelectItem::QualifiedWildcard(kind, options) => {
                match kind {
                    SelectItemQualifiedWildcardKind::ObjectName(_) => {}
                    SelectItemQualifiedWildcardKind::Expr(expr) => self.expr(expr)?,
                }
                self.wildcard_options(options)
            }
            SelectItem::Wildcard(options) => self.wildcard_options(options),
        }
    }

    fn wildcard_options(&mut self, options: &WildcardAdditionalOptions) -> Walk {
        let WildcardAdditionalOptions {
            wildcard_token: _,
            opt_ilike: _,
            opt_exclude: _,
            opt_except: _,
            opt_replace,
            opt_rename: _,
            opt_alias: _,
        } = options;
        if let Some(ReplaceSelectItem { items }) = opt_replace {
            for item in items {
                self.expr(&item.expr)?;
            }
        }
        Ok(())
    }

    fn group_by(&mut self, group_by: &GroupByExpr) -> Walk {
        let modifiers = match group_by {
            GroupByExpr::All(modifiers) => modifiers,
            GroupByExpr::Expressions(exprs, modifiers) => {
                self.exprs(exprs)?;
                modifiers
            }
        };
        for modifier in modifiers {
            match modifier {
                GroupByWithModifier::GroupingSets(expr) => self.expr(expr)?,
                GroupByWithModifier::Rollup
                | GroupByWithModifier::Cube
                | GroupByWithModifier::Totals => {
                    return Err(unsupported(
                        "GROUP BY ... WITH ROLLUP/CUBE/TOTALS",
                        "use GROUP BY ROLLUP (...) or CUBE (...)",
                    ));
                }
            }
        }
        Ok(())
    }

    fn order_by(&mut self, order_by: &OrderBy) -> Walk {
        let OrderBy { kind, interpolate } = order_by;
        if interpolate.is_some() {
            return Err(unsupported("INTERPOLATE", "remove it"));
        }
        match kind {
            OrderByKind::All(_) => Ok(()),
            OrderByKind::Expressions(exprs) => self.order_by_exprs(exprs),
        }
    }

    fn order_by_exprs(&mut self, exprs: &[OrderByExpr]) -> Walk {
        for OrderByExpr {
            expr,
            options: _,
            with_fill,
        } in exprs
        {
            if with_fill.is_some() {
                return Err(unsupported("WITH FILL", "remove it"));
            }
            self.expr(expr)?;
        }
        Ok(())
    }

    fn limit(&mut self, limit: &LimitClause) -> Walk {
        match limit {
            LimitClause::LimitOffset {
                limit,
                offset,
                limit_by,
            } => {
                if !limit_by.is_empty() {
                    return Err(unsupported(
                        "LIMIT ... BY",
                        "use a window function with QUALIFY",
                    ));
                }
                self.opt_expr(limit.as_ref())?;
                if let Some(Offset { value, rows: _ }) = offset {
                    self.expr(value)?;
                }
                Ok(())
            }
            LimitClause::OffsetCommaLimit { offset, limit } => {
                self.expr(offset)?;
                self.expr(limit)
            }
        }
    }

    // ----- FROM ----------------------------------------------------------------------------

    fn table_with_joins(&mut self, table: &TableWithJoins) -> Walk {
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
                match value_source {
                    PivotValueSource::List(values) => self.exprs_with_aliases(values)?,
                    // The values come from the data: DuckDB would run a query of its own first.
                    PivotValueSource::Any(_) | PivotValueSource::Subquery(_) => {
                        return Err(pivot_refused());
                    }
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

    /// A table function call in `FROM`: allowlisted names only.
    fn table_function(&mut self, name: &ObjectName, args: &[FunctionArg]) -> Walk {
        let called = self.function_name(name)?;
        if let Some(denial) = functions::denial(&called) {
            return Err(denied(&called, denial));
        }
        match functions::allowed_table_function(&called) {
            None => return Err(table_function_not_allowed(&called)),
            Some(RowSource::Catalog) => self.check_catalog_listing(&format!("{called}()"))?,
            Some(RowSource::Arguments | RowSource::Constant) => {}
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
                if let Some(found) = self.catalog.find(None, &table.value) {
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
                if looks_like_path(&table.value) {
                    return Err(file_relation(&table.value));
                }
                let mut refusal = unknown_relation(&written);
                // The same name in another schema: DuckDB only searches `main` unqualified.
                if let Some(other) = self
                    .catalog
                    .relations
                    .iter()
                    .find(|r| r.name.eq_ignore_ascii_case(&table.value))
                {
                    refusal.suggestion = format!(
                        "Qualify it with its schema: {}.{}.",
                        other.schema, other.name
                    );
                }
                Err(refusal)
            }
            [schema, table] => {
                if let Some(found) = self.catalog.find(Some(&schema.value), &table.value) {
                    self.read_catalog_relation(found);
                    return Ok(());
                }
                // `db.t`: DuckDB tries `db` as a schema first, then as a catalog (its `main`).
                if self.is_database(schema)
                    && let Some(found) = self.catalog.find(None, &table.value)
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
            // Only the attached database's own relations may be named with a catalog: `system`,
            // `temp` and `memory` hold DuckDB's views and the session's state.
            [catalog, schema, table] if self.is_database(catalog) => {
                match self.catalog.find(Some(&schema.value), &table.value) {
                    Some(found) => {
                        self.read_catalog_relation(found);
                        Ok(())
                    }
                    None if parts.iter().any(|p| looks_like_path(&p.value)) => {
                        Err(file_relation(&written))
                    }
                    None => Err(unknown_relation(&written)),
                }
            }
            _ => {
                if parts.iter().any(|p| looks_like_path(&p.value)) {
                    return Err(file_relation(&written));
                }
                Err(unknown_relation(&written))
            }
        }
    }

    /// Whether `part` names the attached database (its catalog name, ASCII case-insensitive).
    fn is_database(&self, part: &Ident) -> bool {
        !self.catalog.database.is_empty() && part.value.eq_ignore_ascii_case(&self.catalog.database)
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

    // ----- functions -----------------------------------------------------------------------

    /// The called name (last part, lower case), refusing names built from function calls.
    fn function_name(&self, name: &ObjectName) -> Result<String, Refusal> {
        let mut last = None;
        for part in &name.0 {
            match part {
                ObjectNamePart::Identifier(ident) => last = Some(ident),
                ObjectNamePart::Function(_) => {
                    return Err(unsupported(
                        "a function call inside a function name",
                        "call the function by name",
                    ));
                }
            }
        }
        match last {
            Some(ident) => Ok(lower(ident)),
            None => Err(unsupported(
                "a function without a name",
                "call the function by name",
            )),
        }
    }

    fn function(&mut self, function: &Function) -> Walk {
        let Function {
            name,
            uses_odbc_syntax,
            parameters,
            args,
            within_group,
            filter,
            null_treatment: _,
            over,
        } = function;
        let called = self.function_name(name)?;
        if let Some(denial) = functions::denial(&called) {
            return Err(denied(&called, denial));
        }
        if *uses_odbc_syntax {
            return Err(unsupported(
                "{fn ...} escapes",
                "call the function directly",
            ));
        }
        match parameters {
            FunctionArguments::None => {}
            FunctionArguments::Subquery(_) | FunctionArguments::List(_) => {
                return Err(unsupported(
                    "parametric functions f(...)(...)",
                    "call the function with one argument list",
                ));
            }
        }
        if called.starts_with("duckdb_") || called.starts_with("pragma_") {
            self.check_catalog_listing(&format!("{called}()"))?;
        }
        push_unique(&mut self.functions, called);
        self.function_arguments(args)?;
        self.order_by_exprs(within_group)?;
        if let Some(filter) = filter {
            self.expr(filter)?;
        }
        match over {
            None | Some(WindowType::NamedWindow(_)) => Ok(()),
            Some(WindowType::WindowSpec(spec)) => self.window_spec(spec),
        }
    }

    fn function_arguments(&mut self, args: &FunctionArguments) -> Walk {
        match args {
            FunctionArguments::None => Ok(()),
            FunctionArguments::Subquery(query) => self.query(query),
            FunctionArguments::List(FunctionArgumentList {
                duplicate_treatment: _,
                args,
                clauses,
            }) => {
                self.function_args(args)?;
                for clause in clauses {
                    match clause {
                        FunctionArgumentClause::IgnoreOrRespectNulls(_)
                        | FunctionArgumentClause::Separator(_)
                        | FunctionArgumentClause::JsonNullClause(_)
                        | FunctionArgumentClause::JsonReturningClause(_) => {}
                        FunctionArgumentClause::Where(expr)
                        | FunctionArgumentClause::Limit(expr) => self.expr(expr)?,
                        FunctionArgumentClause::OrderBy(exprs) => self.order_by_exprs(exprs)?,
                        FunctionArgumentClause::Having(bound) => self.expr(&bound.1)?,
                        FunctionArgumentClause::OnOverflow(overflow) => match overflow {
                            ListAggOnOverflow::Error => {}
                            ListAggOnOverflow::Truncate {
                                filler,
                                with_count: _,
                            } => {
                                if let Some(filler) = filler {
                                    self.expr(filler)?;
                                }
                            }
                        },
                    }
                }
                Ok(())
            }
        }
    }

    fn function_args(&mut self, args: &[FunctionArg]) -> Walk {
        for arg in args {
            let value = match arg {
                FunctionArg::Named {
                    name: _,
                    arg,
                    operator: _,
                } => arg,
                FunctionArg::ExprNamed {
                    name,
                    arg,
                    operator: _,
                } => {
                    self.expr(name)?;
                    arg
                }
                FunctionArg::Unnamed(arg) => arg,
            };
            match value {
                FunctionArgExpr::Expr(expr) => self.expr(expr)?,
                FunctionArgExpr::QualifiedWildcard(_) | FunctionArgExpr::Wildcard => {}
                FunctionArgExpr::WildcardWithOptions(options) => self.wildcard_options(options)?,
            }
        }
        Ok(())
    }

    fn window_spec(&mut self, spec: &WindowSpec) -> Walk {
        let WindowSpec {
            window_name: _,
            partition_by,
            order_by,
            window_frame,
        } = spec;
        self.exprs(partition_by)?;
        self.order_by_exprs(order_by)?;
        if let Some(WindowFrame {
            units: _,
            start_bound,
            end_bound,
        }) = window_frame
        {
            for bound in std::iter::once(start_bound).chain(end_bound.as_ref()) {
                match bound {
                    WindowFrameBound::CurrentRow => {}
                    WindowFrameBound::Preceding(e) | WindowFrameBound::Following(e) => {
                        if let Some(e) = e {
                            self.expr(e)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    // ----- expressions ---------------------------------------------------------------------

    fn exprs(&mut self, exprs: &[Expr]) -> Walk {
        for expr in exprs {
            self.expr(expr)?;
        }
        Ok(())
    }

    fn exprs_with_aliases(&mut self, exprs: &[ExprWithAlias]) -> Walk {
        for ExprWithAlias { expr, alias: _ } in exprs {
            self.expr(expr)?;
        }
        Ok(())
    }

    fn opt_expr(&mut self, expr: Option<&Expr>) -> Walk {
        match expr {
            Some(expr) => self.expr(expr),
            None => Ok(()),
        }
    }

    fn boxed(&mut self, expr: &Option<Box<Expr>>) -> Walk {
        self.opt_expr(expr.as_deref())
    }

    fn expr(&mut self, expr: &Expr) -> Walk {
        self.descend()?;
        self.expr_inner(expr)?;
        self.depth -= 1;
        Ok(())
    }

    fn expr_inner(&mut self, expr: &Expr) -> Walk {
        match expr {
            // Column references and `*`: nothing to decide here. DuckDB binds them in the worker,
            // against a catalog without hidden tables and columns (see the module comment).
            Expr::Identifier(_)
            | Expr::CompoundIdentifier(_)
            | Expr::Wildcard(_)
            | Expr::QualifiedWildcard(..) => Ok(()),
            Expr::CompoundFieldAccess { root, access_chain } => {
                self.expr(root)?;
                for access in access_chain {
                    match access {
                        AccessExpr::Dot(expr) => self.expr(expr)?,
                        AccessExpr::Subscript(subscript) => self.subscript(subscript)?,
                    }
                }
                Ok(())
            }
            Expr::JsonAccess { value, path } => {
                self.expr(value)?;
                for element in &path.path {
                    match element {
                        JsonPathElem::Dot { key: _, quoted: _ } => {}
                        JsonPathElem::Bracket { key } | JsonPathElem::ColonBracket { key } => {
                            self.expr(key)?
                        }
                    }
                }
                Ok(())
            }
            Expr::IsFalse(e)
            | Expr::IsNotFalse(e)
            | Expr::IsTrue(e)
            | Expr::IsNotTrue(e)
            | Expr::IsNull(e)
            | Expr::IsNotNull(e)
            | Expr::IsUnknown(e)
            | Expr::IsNotUnknown(e)
            | Expr::Nested(e)
            | Expr::UnaryOp { op: _, expr: e }
            | Expr::Collate {
                expr: e,
                collation: _,
            }
            | Expr::Ceil { expr: e, field: _ }
            | Expr::Floor { expr: e, field: _ }
            | Expr::Extract {
                field: _,
                syntax: _,
                expr: e,
            }
            | Expr::Cast {
                kind: _,
                expr: e,
                data_type: _,
                format: _,
            }
            | Expr::IsJson {
                expr: e,
                kind: _,
                unique_keys: _,
                negated: _,
            }
            | Expr::IsNormalized {
                expr: e,
                form: _,
                negated: _,
            }
            | Expr::Named { expr: e, name: _ } => self.expr(e),
            Expr::IsDistinctFrom(a, b)
            | Expr::IsNotDistinctFrom(a, b)
            | Expr::BinaryOp {
                left: a,
                op: _,
                right: b,
            }
            | Expr::AnyOp {
                left: a,
                compare_op: _,
                right: b,
                is_some: _,
            }
            | Expr::AllOp {
                left: a,
                compare_op: _,
                right: b,
            }
            | Expr::AtTimeZone {
                timestamp: a,
                time_zone: b,
            }
            | Expr::Position { expr: a, r#in: b }
            | Expr::RLike {
                negated: _,
                expr: a,
                pattern: b,
                regexp: _,
            }
            | Expr::InUnnest {
                expr: a,
                array_expr: b,
                negated: _,
            } => {
                self.expr(a)?;
                self.expr(b)
            }
            Expr::Like {
                negated: _,
                any: _,
                expr,
                pattern,
                escape_char,
            }
            | Expr::ILike {
                negated: _,
                any: _,
                expr,
                pattern,
                escape_char,
            }
            | Expr::SimilarTo {
                negated: _,
                expr,
                pattern,
                escape_char,
            } => {
                self.expr(expr)?;
                self.expr(pattern)?;
                self.boxed(escape_char)
            }
            Expr::InList {
                expr,
                list,
                negated: _,
            } => {
                self.expr(expr)?;
                self.exprs(list)
            }
            Expr::InSubquery {
                expr,
                subquery,
                negated: _,
            } => {
                self.expr(expr)?;
                self.query(subquery)
            }
            Expr::Between {
                expr,
                negated: _,
                low,
                high,
            } => {
                self.expr(expr)?;
                self.expr(low)?;
                self.expr(high)
            }
            Expr::Substring {
                expr,
                substring_from,
                substring_for,
                special: _,
                shorthand: _,
            } => {
                self.expr(expr)?;
                self.boxed(substring_from)?;
                self.boxed(substring_for)
            }
            Expr::Trim {
                trim_where: _,
                trim_what,
                expr,
                trim_characters,
            } => {
                self.expr(expr)?;
                self.boxed(trim_what)?;
                if let Some(chars) = trim_characters {
                    self.exprs(chars)?;
                }
                Ok(())
            }
            Expr::Overlay {
                expr,
                overlay_what,
                overlay_from,
                overlay_for,
            } => {
                self.expr(expr)?;
                self.expr(overlay_what)?;
                self.expr(overlay_from)?;
                self.boxed(overlay_for)
            }
            Expr::Value(value) => check_value(&value.value),
            Expr::TypedString(typed) => check_value(&typed.value.value),
            Expr::Function(function) => self.function(function),
            Expr::Case {
                case_token: _,
                end_token: _,
                operand,
                conditions,
                else_result,
            } => {
                self.boxed(operand)?;
                for when in conditions {
                    self.expr(&when.condition)?;
                    self.expr(&when.result)?;
                }
                self.boxed(else_result)
            }
            Expr::Exists {
                subquery,
                negated: _,
            } => self.query(subquery),
            Expr::Subquery(query) => self.query(query),
            Expr::GroupingSets(sets) | Expr::Cube(sets) | Expr::Rollup(sets) => {
                for set in sets {
                    self.exprs(set)?;
                }
                Ok(())
            }
            Expr::Tuple(exprs) => self.exprs(exprs),
            Expr::Struct { values, fields: _ } => self.exprs(values),
            Expr::Dictionary(fields) => {
                for field in fields {
                    self.expr(&field.value)?;
                }
                Ok(())
            }
            Expr::Map(map) => {
                for entry in &map.entries {
                    self.expr(&entry.key)?;
                    self.expr(&entry.value)?;
                }
                Ok(())
            }
            Expr::Array(array) => self.exprs(&array.elem),
            Expr::Interval(interval) => self.expr(&interval.value),
            Expr::Lambda(LambdaFunction {
                params: _,
                body,
                syntax: _,
            }) => self.expr(body),
            Expr::Convert { .. } => Err(unsupported("CONVERT(...)", "use CAST(... AS type)")),
            Expr::Prefixed { .. } => Err(unsupported("prefixed literals", "use a plain literal")),
            Expr::MatchAgainst { .. } => Err(unsupported(
                "MATCH ... AGAINST",
                "use LIKE or regexp_matches()",
            )),
            Expr::OuterJoin(_) => Err(unsupported("(+) outer joins", "use LEFT JOIN")),
            Expr::Prior(_) => Err(unsupported("PRIOR", "use WITH RECURSIVE")),
            Expr::MemberOf(_) => Err(unsupported("MEMBER OF", "use list_contains()")),
        }
    }

    fn subscript(&mut self, subscript: &Subscript) -> Walk {
        match subscript {
            Subscript::Index { index } => self.expr(index),
            Subscript::Slice {
                lower_bound,
                upper_bound,
                stride,
            } => {
                self.opt_expr(lower_bound.as_ref())?;
                self.opt_expr(upper_bound.as_ref())?;
                self.opt_expr(stride.as_ref())
            }
        }
    }
}

/// Literals: plain strings, numbers, booleans and NULL. Parameters are refused (nothing binds
/// them); other dialects' string forms are refused (DuckDB lexes them differently).
fn check_value(value: &Value) -> Walk {
    match value {
        Value::Number(..)
        | Value::SingleQuotedString(_)
        | Value::DollarQuotedString(_)
        | Value::Boolean(_)
        | Value::Null => Ok(()),
        Value::Placeholder(p) => Err(unsupported(
            &format!("the parameter {p}"),
            "write the value into the query as a literal",
        )),
        Value::TripleSingleQuotedString(_)
        | Value::TripleDoubleQuotedString(_)
        | Value::EscapedStringLiteral(_)
        | Value::UnicodeStringLiteral(_)
        | Value::SingleQuotedByteStringLiteral(_)
        | Value::DoubleQuotedByteStringLiteral(_)
        | Value::TripleSingleQuotedByteStringLiteral(_)
        | Value::TripleDoubleQuotedByteStringLiteral(_)
        | Value::SingleQuotedRawStringLiteral(_)
        | Value::DoubleQuotedRawStringLiteral(_)
        | Value::TripleSingleQuotedRawStringLiteral(_)
        | Value::TripleDoubleQuotedRawStringLiteral(_)
        | Value::NationalStringLiteral(_)
        | Value::QuoteDelimitedStringLiteral(_)
        | Value::NationalQuoteDelimitedStringLiteral(_)
        | Value::HexStringLiteral(_)
        | Value::DoubleQuotedString(_) => Err(unsupported(
            "this kind of string literal",
            "use a plain '...' string",
        )),
    }
}

/// A PIVOT whose values are not listed: DuckDB first runs a query of its own to find them,
/// which makes the statement several.
pub(crate) fn pivot_refused() -> Refusal {
    policy_blocked(
        "PIVOT",
        "PIVOT without an IN list of values is not supported: DuckDB would first run a query of \
         its own to find the values, which makes it several statements."
            .into(),
        "List the values for each ON column: PIVOT t ON col IN ('a', 'b') USING sum(v), or in \
         FROM: t PIVOT (sum(v) FOR col IN ('a', 'b')).",
    )
}
