//! Expressions, subscripts and literals.

use sqlparser::ast::{
    AccessExpr, Expr, ExprWithAlias, JsonPathElem, LambdaFunction, Subscript, Value,
};

use super::{Walk, Walker};
use crate::validate::refusals::unsupported;

impl Walker<'_> {
    pub(super) fn exprs(&mut self, exprs: &[Expr]) -> Walk {
        for expr in exprs {
            self.expr(expr)?;
        }
        Ok(())
    }

    pub(super) fn exprs_with_aliases(&mut self, exprs: &[ExprWithAlias]) -> Walk {
        for ExprWithAlias { expr, alias: _ } in exprs {
            self.expr(expr)?;
        }
        Ok(())
    }

    pub(super) fn opt_expr(&mut self, expr: Option<&Expr>) -> Walk {
        match expr {
            Some(expr) => self.expr(expr),
            None => Ok(()),
        }
    }

    fn boxed(&mut self, expr: &Option<Box<Expr>>) -> Walk {
        self.opt_expr(expr.as_deref())
    }

    pub(super) fn expr(&mut self, expr: &Expr) -> Walk {
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

/// Literals: plain strings, numbers, booleans, NULL and parameters (which bind nothing);
/// other dialects' string forms are refused (DuckDB lexes them differently).
fn check_value(value: &Value) -> Walk {
    match value {
        Value::Number(..)
        | Value::SingleQuotedString(_)
        | Value::DollarQuotedString(_)
        | Value::Boolean(_)
        | Value::Null => Ok(()),
        // Nothing binds a parameter, so DuckDB answers one with its own error; and sqlparser
        // reads DuckDB's slice step (`a[:-:2]`) as one. Either way it reads nothing.
        Value::Placeholder(_) => Ok(()),
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
