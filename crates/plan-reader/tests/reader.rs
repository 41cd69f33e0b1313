//! The reader against the linked DuckDB: what it hands a judge for real plans, that a refusal
//! stops the prepare, and that unarmed connections are not judged.

use std::sync::{Arc, Mutex};

use duckgate_plan_reader::{
    Code, ColumnKind, ExpressionClass, Fact, FunctionKind, Judge, LogicalOperatorType,
    LogicalTypeId, Phase, PlanFacts, Verdict, arm, open_in_memory,
};

/// Remembers every plan it is shown; refuses when told to.
#[derive(Default)]
struct Recorder {
    plans: Mutex<Vec<(Phase, PlanFacts)>>,
    refuse: Mutex<bool>,
}

impl Judge for Recorder {
    fn judge(&self, phase: Phase, facts: &PlanFacts) -> Verdict {
        self.plans.lock().unwrap().push((phase, facts.clone()));
        if *self.refuse.lock().unwrap() {
            Verdict::Refuse
        } else {
            Verdict::Allow
        }
    }
}

impl Recorder {
    fn take(&self) -> Vec<(Phase, PlanFacts)> {
        std::mem::take(&mut *self.plans.lock().unwrap())
    }

    /// The facts of the one bound plan shown since the last call.
    fn bound(&self) -> PlanFacts {
        let plans = self.take();
        let bound: Vec<_> = plans
            .into_iter()
            .filter(|(phase, _)| *phase == Phase::Bound)
            .collect();
        assert_eq!(bound.len(), 1, "one bound plan");
        bound.into_iter().next().unwrap().1
    }
}

fn setup() -> (duckdb::Connection, Arc<Recorder>) {
    let (conn, token) = open_in_memory(
        &[("threads", "1")],
        &duckgate_plan_reader::FolderMounts::NONE,
    )
    .expect("open");
    conn.execute_batch(
        "CREATE TABLE readings (ts TIMESTAMP, glucose INTEGER, note VARCHAR, serial VARCHAR);
         INSERT INTO readings VALUES ('2026-01-01 08:00', 120, 'breakfast', 'SN1');
         CREATE VIEW labels AS SELECT ts, serial AS label FROM readings;",
    )
    .expect("schema");
    let recorder = Arc::new(Recorder::default());
    let armed = arm(&conn, token, recorder.clone()).expect("arm");
    // Arming reads the connection's id with a query of its own, made before it was armed.
    assert_eq!(armed.plans_judged(Phase::Bound), 0);
    recorder.take();
    (conn, recorder)
}

fn operators(facts: &PlanFacts) -> Vec<LogicalOperatorType> {
    facts
        .facts
        .iter()
        .filter_map(|fact| match fact {
            Fact::Operator(Code::Known(op)) => Some(*op),
            _ => None,
        })
        .collect()
}

fn functions(facts: &PlanFacts, kind: FunctionKind) -> Vec<String> {
    facts
        .facts
        .iter()
        .filter_map(|fact| match fact {
            Fact::Function(f) if f.kind == kind => Some(f.name.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn every_prepare_on_an_armed_connection_shows_the_judge_its_bound_and_optimized_plans() {
    let (conn, recorder) = setup();
    conn.prepare("SELECT upper(note), avg(glucose) FROM readings WHERE glucose > 100 GROUP BY 1")
        .expect("prepare");
    let plans = recorder.take();
    let phases: Vec<Phase> = plans.iter().map(|(phase, _)| *phase).collect();
    assert_eq!(phases, [Phase::Bound, Phase::Optimized]);
    let bound = &plans[0].1;
    let ops = operators(bound);
    for op in [
        LogicalOperatorType::Projection,
        LogicalOperatorType::AggregateAndGroupBy,
        LogicalOperatorType::Filter,
        LogicalOperatorType::Get,
    ] {
        assert!(ops.contains(&op), "{op:?} in {ops:?}");
    }
    assert!(functions(bound, FunctionKind::Scalar).contains(&"upper".to_owned()));
    assert!(
        functions(
            bound,
            FunctionKind::Aggregate {
                exports_state: false
            }
        )
        .contains(&"avg".to_owned())
    );
    assert_eq!(bound.scans.len(), 1);
    let scan = &bound.scans[0];
    assert_eq!(scan.function.last().map(String::as_str), Some("seq_scan"));
    assert_eq!(
        scan.table.as_deref(),
        Some(
            &[
                "memory".to_owned(),
                "main".to_owned(),
                "readings".to_owned()
            ][..]
        )
    );
    let columns: Vec<&str> = scan.columns.iter().map(|c| c.name.as_str()).collect();
    assert!(
        columns.contains(&"note") && columns.contains(&"glucose"),
        "{columns:?}"
    );
    assert!(!columns.contains(&"serial"), "{columns:?}");
}

#[test]
fn the_optimized_plan_reads_only_the_view_columns_a_query_uses() {
    let (conn, recorder) = setup();
    conn.prepare("SELECT ts FROM labels").expect("prepare");
    let plans = recorder.take();
    let columns = |phase: Phase| -> Vec<String> {
        let (_, facts) = plans.iter().find(|(p, _)| *p == phase).expect("phase");
        facts.scans[0]
            .columns
            .iter()
            .filter(|c| c.kind == ColumnKind::Own)
            .map(|c| c.name.clone())
            .collect()
    };
    // Bound: the view binds every column it has; optimized: only what the query uses.
    assert!(columns(Phase::Bound).contains(&"serial".to_owned()));
    assert_eq!(columns(Phase::Optimized), ["ts"]);
}

#[test]
fn a_refusal_stops_the_prepare_and_nothing_runs() {
    let (conn, recorder) = setup();
    *recorder.refuse.lock().unwrap() = true;
    let Err(error) = conn.prepare("SELECT count(*) FROM readings") else {
        panic!("the prepare of a refused plan succeeded");
    };
    assert!(error.to_string().contains("duckgate refused"), "{error}");
    // The bound plan was judged; the optimizer never ran.
    let phases: Vec<Phase> = recorder.take().iter().map(|(p, _)| *p).collect();
    assert_eq!(phases, [Phase::Bound]);
    *recorder.refuse.lock().unwrap() = false;
    let n: i64 = conn
        .query_row("SELECT count(*) FROM readings", [], |r| r.get(0))
        .expect("allowed again");
    assert_eq!(n, 1);
}

#[test]
fn lambda_bodies_casts_constants_and_windows_are_read() {
    let (conn, recorder) = setup();
    conn.prepare(
        "SELECT list_transform([1, 2], lambda x: x + length(note)), glucose::DOUBLE, \
         row_number() OVER (ORDER BY ts), DATE '2026-01-01' FROM readings",
    )
    .expect("prepare");
    let bound = recorder.bound();
    // The lambda's body is not among the expressions DuckDB's own enumerator lists.
    assert!(functions(&bound, FunctionKind::Scalar).contains(&"length".to_owned()));
    assert!(!functions(&bound, FunctionKind::Cast).is_empty());
    assert!(functions(&bound, FunctionKind::Window).contains(&"row_number".to_owned()));
    let types: Vec<LogicalTypeId> = bound
        .facts
        .iter()
        .filter_map(|f| match f {
            Fact::Type {
                id: Code::Known(id),
                ..
            } => Some(*id),
            _ => None,
        })
        .collect();
    for id in [
        LogicalTypeId::Date,
        LogicalTypeId::List,
        LogicalTypeId::Double,
    ] {
        assert!(types.contains(&id), "{id:?} in {types:?}");
    }
    let classes: Vec<ExpressionClass> = bound
        .facts
        .iter()
        .filter_map(|f| match f {
            Fact::Expression(Code::Known(c)) => Some(*c),
            _ => None,
        })
        .collect();
    assert!(classes.contains(&ExpressionClass::BoundLambda));
    assert!(classes.contains(&ExpressionClass::BoundWindow));
}

#[test]
fn statements_that_are_not_queries_come_as_what_the_walk_cannot_read() {
    let (conn, recorder) = setup();
    conn.prepare("CREATE TABLE copy AS SELECT * FROM readings")
        .expect("prepare");
    let bound = recorder.bound();
    assert!(operators(&bound).contains(&LogicalOperatorType::CreateTable));
    assert!(
        bound
            .facts
            .iter()
            .any(|f| matches!(f, Fact::Unknown(what) if what.contains("CREATE_TABLE"))),
        "{bound:?}"
    );
}

#[test]
fn a_connection_that_is_not_armed_is_not_judged() {
    let (conn, recorder) = setup();
    let other = conn.try_clone().expect("clone");
    other.prepare("SELECT 1").expect("prepare");
    assert!(recorder.take().is_empty());
    conn.prepare("SELECT 1").expect("prepare");
    assert_eq!(recorder.take().len(), 2);
}

/// DuckDB 2.0's C API prepares a statement as a `PREPARE` of it and runs it as an `EXECUTE`,
/// which binds a statement that reads a table again: the judge sees the scan at both steps, so
/// nothing runs on a plan it did not judge. A constant statement is planned when it executes.
#[test]
fn a_table_query_is_judged_when_prepared_and_again_when_it_executes() {
    let (conn, recorder) = setup();
    let scans_readings = |plans: &[(Phase, PlanFacts)], phase: Phase| {
        plans.iter().any(|(p, facts)| {
            *p == phase
                && facts.scans.iter().any(|scan| {
                    scan.table
                        .as_ref()
                        .is_some_and(|t| t.last().map(String::as_str) == Some("readings"))
                })
        })
    };
    let mut stmt = conn
        .prepare("SELECT glucose FROM readings")
        .expect("prepare");
    let prepared = recorder.take();
    assert!(scans_readings(&prepared, Phase::Bound), "{prepared:?}");
    assert!(scans_readings(&prepared, Phase::Optimized), "{prepared:?}");
    let rows: Vec<i32> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows, [120]);
    let executed = recorder.take();
    assert!(scans_readings(&executed, Phase::Bound), "{executed:?}");
    assert!(scans_readings(&executed, Phase::Optimized), "{executed:?}");
    let answer: i64 = conn.query_row("SELECT 42", [], |r| r.get(0)).unwrap();
    assert_eq!(answer, 42);
    let constant = recorder.take();
    assert!(
        constant.iter().any(|(p, _)| *p == Phase::Bound)
            && constant.iter().any(|(p, _)| *p == Phase::Optimized),
        "{constant:?}"
    );
}
