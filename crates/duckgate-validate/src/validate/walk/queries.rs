//! Queries, CTEs, set operations, `SELECT` and its clauses.

use sqlparser::ast::{
    Cte, Distinct, Fetch, GroupByExpr, GroupByWithModifier, Ident, LimitClause,
    NamedWindowDefinition, NamedWindowExpr, ObjectName, Offset, OrderBy, OrderByExpr, OrderByKind,
    Query, ReplaceSelectItem, Select, SelectItem, SelectItemQualifiedWildcardKind, SetExpr,
    SetOperator, SetQuantifier, Values, WildcardAdditionalOptions, With,
};

use super::{Walk, Walker, lower};
use crate::validate::refusals::{policy_blocked, unsupported};
use crate::validate::write_refused;

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

impl Walker<'_> {
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
            SetExpr::Insert(_) => return Err(write_refused("INSERT")),
            SetExpr::Update(_) => return Err(write_refused("UPDATE")),
            SetExpr::Delete(_) => return Err(write_refused("DELETE")),
            SetExpr::Merge(_) => return Err(write_refused("MERGE")),
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

    pub(super) fn wildcard_options(&mut self, options: &WildcardAdditionalOptions) -> Walk {
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

    pub(super) fn order_by_exprs(&mut self, exprs: &[OrderByExpr]) -> Walk {
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
}
