//! Table-driven tests over [`corpus`](super::corpus), plus targeted checks of messages and caps.

use super::corpus::{self, ACCEPTED, Expect, KNOWN_LIMITATIONS, REFUSED};
use super::{Policy, StatementKind, check};
use crate::error::{ErrorKind, messages};

fn run(sql: &str) -> Result<super::Accepted, super::Refusal> {
    check(sql, &corpus::catalog(), &Policy::default())
}

#[test]
fn every_everyday_query_is_accepted() {
    let failures: Vec<String> = ACCEPTED
        .iter()
        .filter_map(|sql| {
            run(sql)
                .err()
                .map(|r| format!("{sql}\n    -> {:?}: {}", r.kind, r.message))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} false refusals:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn refusal_matches(expect: Expect, refusal: &super::Refusal) -> bool {
    refusal.kind == expect.kind()
        && match expect {
            Expect::Write => refusal.message == messages::WRITE_REFUSED,
            Expect::Multiple => refusal.message == messages::MULTIPLE_STATEMENTS,
            Expect::Blocked => {
                refusal.message != messages::WRITE_REFUSED
                    && !refusal.construct.is_empty()
                    && !refusal.suggestion.is_empty()
            }
            Expect::Unknown | Expect::Syntax | Expect::Invalid => !refusal.message.is_empty(),
        }
}

#[test]
fn every_forbidden_statement_is_refused_with_the_right_kind_and_message() {
    let failures: Vec<String> = REFUSED
        .iter()
        .filter_map(|(sql, expect)| match run(sql) {
            Ok(accepted) => Some(format!(
                "{sql:?}\n    -> ACCEPTED {accepted:?}, expected {expect:?}"
            )),
            Err(r) if !refusal_matches(*expect, &r) => Some(format!(
                "{sql:?}\n    -> {:?} {:?} [{}], expected {expect:?}",
                r.kind, r.message, r.construct
            )),
            Err(_) => None,
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} wrong verdicts:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn known_limitations_are_refused_as_recorded() {
    let failures: Vec<String> = KNOWN_LIMITATIONS
        .iter()
        .filter_map(|(sql, expect, why)| match run(sql) {
            Ok(_) => Some(format!(
                "{sql:?} is now accepted: update KNOWN_LIMITATIONS ({why})"
            )),
            Err(r) if r.kind != expect.kind() => {
                Some(format!("{sql:?} -> {:?} {}", r.kind, r.message))
            }
            Err(_) => None,
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "prints every verdict for eyeballing"]
fn print_verdicts() {
    for (sql, _) in REFUSED {
        match run(sql) {
            Ok(a) => eprintln!("{sql:?}\n   ACCEPTED {a:?}"),
            Err(r) => eprintln!(
                "{sql:?}\n   {} [{}] {} | {}",
                r.kind, r.construct, r.message, r.suggestion
            ),
        }
    }
}
