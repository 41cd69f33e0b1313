//! The enumerations plan facts carry (`duckgate_plan_facts`), held to the DuckDB this crate
//! links, value for value.

use crate::ffi::enum_name;
use duckgate_plan_facts::{
    Enumeration, ExceptionType, ExpressionClass, LogicalOperatorType, LogicalTypeId,
};

/// For every code 0 to 255: DuckDB names it exactly when this crate has a value for it, and
/// by the same name. A DuckDB upgrade that adds, removes or renumbers a value fails here.
fn agrees_with_duckdb(enumeration: Enumeration, from_code: fn(u32) -> Option<(u32, &'static str)>) {
    for code in 0..=255u32 {
        let duckdb = enum_name(enumeration, code);
        let ours = from_code(code).map(|(_, name)| name.to_owned());
        assert_eq!(ours, duckdb, "{enumeration:?} value {code}");
    }
}

#[test]
fn operator_types_are_duckdbs_value_for_value() {
    agrees_with_duckdb(Enumeration::LogicalOperatorType, |code| {
        LogicalOperatorType::from_code(code).map(|v| (v.code(), v.duckdb_name()))
    });
    assert_eq!(
        LogicalOperatorType::ENUMERATION,
        Enumeration::LogicalOperatorType
    );
}

#[test]
fn expression_classes_are_duckdbs_value_for_value() {
    agrees_with_duckdb(Enumeration::ExpressionClass, |code| {
        ExpressionClass::from_code(code).map(|v| (v.code(), v.duckdb_name()))
    });
}

#[test]
fn exception_types_are_duckdbs_value_for_value() {
    agrees_with_duckdb(Enumeration::ExceptionType, |code| {
        ExceptionType::from_code(code).map(|v| (v.code(), v.duckdb_name()))
    });
}

#[test]
fn type_ids_are_duckdbs_value_for_value() {
    agrees_with_duckdb(Enumeration::LogicalTypeId, |code| {
        LogicalTypeId::from_code(code).map(|v| (v.code(), v.duckdb_name()))
    });
}
