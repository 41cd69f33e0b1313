//! Function calls, their arguments and window specifications.

use sqlparser::ast::{
    Function, FunctionArg, FunctionArgExpr, FunctionArgumentClause, FunctionArgumentList,
    FunctionArguments, ListAggOnOverflow, ObjectName, ObjectNamePart, WindowFrame,
    WindowFrameBound, WindowSpec, WindowType,
};

use super::{Walk, Walker, lower, push_unique};
use crate::validate::Refusal;
use crate::validate::functions;
use crate::validate::refusals::{denied, unsupported};

impl Walker<'_> {
    /// The called name (last part, lower case), refusing names built from function calls.
    pub(super) fn function_name(&self, name: &ObjectName) -> Result<String, Refusal> {
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
        // `a.b.name(…)` is a catalog-qualified function only when `a` is a catalog; otherwise
        // DuckDB reads it as a method call on the column `a.b` (`d.model.upper()` is
        // `upper(d.model)`), so the qualification is no evidence of another catalog. The name
        // called is the last part either way, and the policy decides it; DuckDB's parse tree
        // and plan decide the rest.
        match last {
            Some(ident) => Ok(lower(ident)),
            None => Err(unsupported(
                "a function without a name",
                "call the function by name",
            )),
        }
    }

    pub(super) fn function(&mut self, function: &Function) -> Walk {
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
        match functions::expression_use(&called) {
            functions::ExpressionUse::CatalogListing => {
                self.check_catalog_listing(&format!("{called}()"))?;
            }
            functions::ExpressionUse::CountsStatements => {
                self.check_statement_counter(&format!("{called}()"))?;
            }
            functions::ExpressionUse::Allowed
            | functions::ExpressionUse::Refused(_)
            | functions::ExpressionUse::NotBuiltIn => {}
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

    pub(super) fn function_args(&mut self, args: &[FunctionArg]) -> Walk {
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

    pub(super) fn window_spec(&mut self, spec: &WindowSpec) -> Walk {
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
}
