//! Property tests: no panics on junk, grammar queries accepted, acceptance re-parses to one
//! statement, appended writes and planted forbidden constructs refused.

use duckgate_test_kit::fuzz_entry::{self, StructuredInput};
use duckgate_test_kit::generate::{self, Plant, WRITES};
use duckgate_test_kit::{arbitrary, corpus};
use duckgate_validate::error::ErrorKind;
use duckgate_validate::validate::{Limits, StatementKind, validate_sql};
use proptest::prelude::*;

/// Tokens a query is made of, including the dangerous ones, for "token soup" inputs.
const SOUP: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "WITH",
    "RECURSIVE",
    "AS",
    "(",
    ")",
    ",",
    ";",
    "*",
    "readings",
    "devices",
    "x",
    "'x.csv'",
    "\"x.csv\"",
    "'",
    "\"",
    "--",
    "/*",
    "*/",
    "\n",
    "\r",
    "$$",
    "$a$",
    "e'",
    "`",
    "read_csv",
    "getenv",
    "(SELECT",
    "UNION",
    "ALL",
    "JOIN",
    "ON",
    "LATERAL",
    "->",
    "[",
    "]",
    "{",
    "}",
    ":",
    "::",
    "DROP",
    "TABLE",
    "INSERT",
    "INTO",
    "VALUES",
    "SUMMARIZE",
    "DESCRIBE",
    "SHOW",
    "TABLES",
    "EXPLAIN",
    "PIVOT",
    "END",
    "1",
    "'a;b'",
    "\\",
    "?",
    "$1",
    "\u{a0}",
    "é",
    "COLUMNS",
    "EXCLUDE",
    "QUALIFY",
    "OVER",
    "PARTITION",
    "BY",
    "ORDER",
    "LIMIT",
    // Shapes sqlparser cannot parse, which the token scan judges instead.
    "USING SAMPLE 1",
    "ASOF",
    "FILTER",
    "#",
    "IN",
    "ON",
    "PIVOT_WIDER",
    "x:",
    "\u{212A}",
    "health.main.",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec((0..SOUP.len(), prop::bool::ANY), 0..40).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(i, space)| {
                if space {
                    format!("{} ", SOUP[i])
                } else {
                    SOUP[i].to_string()
                }
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_arbitrary_strings(sql in any::<String>()) {
        // Also verifies that anything accepted re-parses to one statement of its kind.
        fuzz_entry::check_and_verify(&sql);
    }

    #[test]
    fn never_panics_on_token_soup(sql in soup()) {
        fuzz_entry::check_and_verify(&sql);
    }

    #[test]
    fn grammar_queries_are_accepted_and_reparse_to_one_statement(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let sql = generate::from_bytes(&bytes).render();
        let verdict = validate_sql(&sql, &corpus::catalog(), &Limits::default());
        prop_assert!(verdict.is_ok(), "refused: {sql}\n{verdict:?}");
        prop_assert!(fuzz_entry::check_and_verify(&sql).is_some());
    }

    #[test]
    fn appending_a_write_to_an_accepted_query_is_refused(
        bytes in prop::collection::vec(any::<u8>(), 0..256),
        which in 0..WRITES.len(),
        separator in prop::sample::select(vec![";", " ;", ";\n", "; /* c */ ", ";--\n"]),
    ) {
        let sql = generate::from_bytes(&bytes).render();
        prop_assume!(validate_sql(&sql, &corpus::catalog(), &Limits::default()).is_ok());
        // A newline first: the grammar may end the query with a `--` comment.
        let joined = format!("{sql}\n{separator}{}", WRITES[which]);
        let refusal = validate_sql(&joined, &corpus::catalog(), &Limits::default());
        prop_assert!(matches!(&refusal, Err(r) if r.kind == ErrorKind::MultipleStatements), "{joined}\n{refusal:?}");
    }

    #[test]
    fn planting_a_forbidden_construct_anywhere_is_refused(
        bytes in prop::collection::vec(any::<u8>(), 0..512),
        at in any::<usize>(),
        plant in prop::sample::select(Plant::ALL.to_vec()),
    ) {
        let spec = generate::from_bytes(&bytes);
        let (sql, slots) = spec.render_planted(Some((at, plant)));
        prop_assert!(slots > 0);
        let verdict = validate_sql(&sql, &corpus::catalog(), &Limits::default());
        prop_assert!(verdict.is_err(), "planted {plant:?} at slot {} of {slots} was accepted: {sql}", at % slots);
    }

    #[test]
    fn a_planted_construct_is_refused_even_when_sqlparser_cannot_parse_the_query(
        bytes in prop::collection::vec(any::<u8>(), 0..512),
        at in any::<usize>(),
        plant in prop::sample::select(Plant::ALL.to_vec()),
    ) {
        let spec = generate::from_bytes(&bytes);
        let (sql, slots) = spec.render_planted(Some((at, plant)));
        prop_assume!(slots > 0);
        // Text after a `;` would be a second statement, refused for that instead.
        prop_assume!(!sql.contains(';'));
        // A newline first: the grammar may end the query with a `--` comment.
        let unparseable = format!("{sql}\nUSING SAMPLE 1 ROWS");
        let verdict = validate_sql(&unparseable, &corpus::catalog(), &Limits::default());
        prop_assert!(verdict.is_err(), "planted {plant:?} at slot {} of {slots} was accepted: {unparseable}", at % slots);
    }

    #[test]
    fn structured_fuzz_invariants_hold(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let mut u = arbitrary::Unstructured::new(&bytes);
        if let Ok(input) = <StructuredInput as arbitrary::Arbitrary>::arbitrary(&mut u) {
            fuzz_entry::structured(input);
        }
    }
}

/// The fixed, slot-rich query of `seed` the two every-slot tests plant into.
fn rich_query(seed: u8) -> generate::QuerySpec {
    let bytes: Vec<u8> = (0..400u32)
        .map(|i| {
            (i as u8)
                .wrapping_mul(31)
                .wrapping_add(seed.wrapping_mul(7))
        })
        .collect();
    generate::from_bytes(&bytes)
}

/// Every plant is refused in every slot of a fixed, slot-rich query (not left to chance).
#[test]
fn every_plant_is_refused_in_every_slot_of_a_rich_query() {
    let mut checked = 0;
    for seed in 0u8..40 {
        let spec = rich_query(seed);
        let slots = spec.slot_count();
        for plant in Plant::ALL {
            for at in 0..slots {
                let (sql, _) = spec.render_planted(Some((at, plant)));
                let verdict = validate_sql(&sql, &corpus::catalog(), &Limits::default());
                assert!(
                    verdict.is_err(),
                    "planted {plant:?} at slot {at}/{slots} was accepted: {sql}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "only {checked} plantings were tried");
}

/// The same plantings in the same query made unparseable for sqlparser: the token scan still
/// finds every one of them.
#[test]
fn every_plant_is_refused_in_every_slot_even_when_sqlparser_cannot_parse_the_query() {
    let mut checked = 0;
    for seed in 0u8..40 {
        let spec = rich_query(seed);
        let slots = spec.slot_count();
        if spec.render().contains(';') {
            // Text after a `;` would be a second statement, refused for that instead.
            continue;
        }
        let plain = format!("{}\nUSING SAMPLE 1 ROWS", spec.render());
        let verdict = validate_sql(&plain, &corpus::catalog(), &Limits::default());
        assert!(
            matches!(&verdict, Ok(a) if a.kind == StatementKind::Unparsed),
            "{plain}: {verdict:?}"
        );
        for plant in Plant::ALL {
            for at in 0..slots {
                let (sql, _) = spec.render_planted(Some((at, plant)));
                let unparseable = format!("{sql}\nUSING SAMPLE 1 ROWS");
                let verdict = validate_sql(&unparseable, &corpus::catalog(), &Limits::default());
                assert!(
                    verdict.is_err(),
                    "planted {plant:?} at slot {at}/{slots} was accepted: {unparseable}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "only {checked} plantings were tried");
}
