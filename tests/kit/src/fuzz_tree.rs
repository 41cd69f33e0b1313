//! The entry point of the `tree_json` fuzz target: the worker's walk of DuckDB's parse tree
//! ([`duckgate_validate::validate::tree`]) on arbitrary JSON.
//!
//! Invariants checked, by panicking when they fail:
//! - [`walk_tree`] never panics, on any JSON;
//! - a privacy rule only adds refusals: a tree accepted under `restricted` is accepted without;
//! - a denied function planted into any object of an accepted tree gets it refused: the walk
//!   visits every value, whatever keys DuckDB's serializer uses around it.

use duckgate_validate::validate::tree::{TreeRules, walk_tree};
use serde_json::{Map, Value as Json, json};

/// Objects the planting invariant tries per input (each try clones the tree).
const MAX_PLANTS: usize = 32;

/// Raw bytes: any JSON document goes through the walk under both rule sets.
pub fn tree_json(data: &[u8]) {
    // serde_json's default recursion limit keeps the harness itself on its stack; the walk is
    // iterative and is not what that limit protects.
    let Ok(tree) = serde_json::from_slice::<Json>(data) else {
        return;
    };
    check_invariants(&tree);
}

/// The invariants on one tree; also run on DuckDB's real trees by duckgate's walk differential
/// test (`tests/it/walk_differential.rs`).
pub fn check_invariants(tree: &Json) {
    let open = TreeRules {
        databases: &["health", "pump"],
        restricted: false,
        folders: &[],
    };
    let private = TreeRules {
        restricted: true,
        folders: &[],
        ..open
    };
    let open_verdict = walk_tree(tree, &open);
    let private_verdict = walk_tree(tree, &private);
    if private_verdict.is_ok() {
        assert!(
            open_verdict.is_ok(),
            "accepted under privacy rules, refused without: {open_verdict:?}"
        );
    }
    if open_verdict.is_err() {
        return;
    }
    let objects = object_count(tree).min(MAX_PLANTS);
    for target in 0..objects {
        let mut planted = tree.clone();
        plant(&mut planted, target);
        let verdict = walk_tree(&planted, &open);
        assert!(
            verdict.is_err(),
            "a getenv() call planted in object {target} was not refused"
        );
    }
}

/// The query node of the one statement, where the walk starts.
fn query_node(tree: &Json) -> Option<&Json> {
    tree.get("statements")?.get(0)?.get("node")
}

/// The objects of the query node, itself included.
fn query_objects(tree: &Json) -> Vec<&Json> {
    let mut found = Vec::new();
    let mut stack: Vec<&Json> = query_node(tree).into_iter().collect();
    while let Some(value) = stack.pop() {
        match value {
            Json::Object(map) => {
                found.push(value);
                stack.extend(map.values());
            }
            Json::Array(items) => stack.extend(items),
            Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => {}
        }
    }
    found
}

fn object_count(tree: &Json) -> usize {
    query_objects(tree).len()
}

/// Add a denied call under a new key of the `target`-th object (in [`query_objects`] order).
fn plant(tree: &mut Json, target: usize) {
    let mut seen = 0;
    let node = tree
        .get_mut("statements")
        .and_then(|statements| statements.get_mut(0))
        .and_then(|statement| statement.get_mut("node"));
    let mut stack: Vec<&mut Json> = node.into_iter().collect();
    while let Some(value) = stack.pop() {
        match value {
            Json::Object(map) => {
                if seen == target {
                    insert_call(map);
                    return;
                }
                seen += 1;
                stack.extend(map.values_mut());
            }
            Json::Array(items) => stack.extend(items.iter_mut()),
            Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => {}
        }
    }
}

fn insert_call(map: &mut Map<String, Json>) {
    map.insert(
        "duckgate_planted".into(),
        json!({"class": "FUNCTION", "type": "FUNCTION", "function_name": "getenv",
               "catalog": "", "schema": "", "children": []}),
    );
}
