//! The session's state machine, line by line: what each line is, what rmcp sees, what is counted.

use std::sync::Arc;

use rmcp::model::{ErrorData, JsonRpcMessage, NumberOrString, ServerJsonRpcMessage, ServerResult};
use serde_json::{Value, json};

use super::*;

fn rejected(line: &str) -> Problem {
    match classify(line.as_bytes()) {
        Incoming::Rejected(problem) => problem,
        other => panic!("{line}: {other:?}"),
    }
}

fn session() -> (Session, Arc<SessionCounters>) {
    let counters = Arc::new(SessionCounters::default());
    (
        Session::new(supported_protocol_versions(), Arc::clone(&counters)),
        counters,
    )
}

/// The message `session` hands rmcp for `line`; panics if it keeps it.
fn delivered(session: &mut Session, line: &Value) -> RxJsonRpcMessage<RoleServer> {
    match session.on_line(line.to_string().as_bytes()) {
        Incoming::Message(message, _) => *message,
        other => panic!("{line}: {other:?}"),
    }
}

/// What `session` does with `line` when it keeps it from rmcp.
fn kept(session: &mut Session, line: &Value) -> Problem {
    match session.on_line(line.to_string().as_bytes()) {
        Incoming::Rejected(problem) => problem,
        other => panic!("{line}: {other:?}"),
    }
}

/// The id rmcp sees for a delivered request.
fn session_id(message: &RxJsonRpcMessage<RoleServer>) -> RequestId {
    match message {
        JsonRpcMessage::Request(request) => request.id.clone(),
        other => panic!("not a request: {other:?}"),
    }
}

fn request(id: Value, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

fn initialize(id: i64) -> Value {
    request(
        json!(id),
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "t", "version": "0" } }),
    )
}

fn meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": { "name": "t", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

fn cancel(id: Value) -> Value {
    json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": { "requestId": id, "reason": "test" } })
}

fn answer(session: &mut Session, own: RequestId) -> Value {
    let mut message: ServerJsonRpcMessage = JsonRpcMessage::response(ServerResult::empty(()), own);
    session.on_send(&mut message);
    serde_json::to_value(&message).unwrap()
}

/// Every notification a client may send before anything else: each kind rmcp knows, and one it
/// does not.
fn early_notifications() -> Vec<Value> {
    vec![
        cancel(json!(1)),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "method": "notifications/roots/list_changed" }),
        json!({ "jsonrpc": "2.0", "method": "notifications/progress",
                "params": { "progressToken": 1, "progress": 1 } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/whatever", "params": { "x": 1 } }),
    ]
}

#[test]
fn a_line_that_is_not_json_is_a_parse_error_with_a_null_id() {
    for line in [
        "this is not json {",
        "{\"jsonrpc\":\"2.0\",\"id\":",
        "\u{feff}{]",
        "{\"a\": \"\u{1}\"\n",
    ] {
        let problem = rejected(line);
        assert_eq!(problem.event, event::UNPARSABLE_LINE, "{line}");
        let reply = problem.reply.unwrap();
        assert_eq!(reply["error"]["code"], PARSE_ERROR, "{line}");
        assert_eq!(reply["jsonrpc"], "2.0");
        assert!(reply.get("id").is_some_and(Value::is_null), "{reply}");
    }
    let invalid_utf8 = match classify(b"{\"a\": \"\xff\"}") {
        Incoming::Rejected(problem) => problem,
        other => panic!("{other:?}"),
    };
    assert_eq!(invalid_utf8.code, Some(PARSE_ERROR));
}

#[test]
fn json_that_is_not_a_request_is_invalid_request_with_its_id_if_it_has_one() {
    let problem = rejected(r#"{"jsonrpc":"2.0","id":5,"method":42}"#);
    assert_eq!(problem.event, event::INVALID_REQUEST);
    let reply = problem.reply.unwrap();
    assert_eq!(reply["error"]["code"], INVALID_REQUEST);
    assert_eq!(reply["id"], 5);
    let reply = rejected(r#"[1, 2]"#).reply.unwrap();
    assert!(reply["id"].is_null(), "{reply}");
    let reply = rejected(r#"{"jsonrpc":"2.0","id":{"x":1},"method":7}"#)
        .reply
        .unwrap();
    assert!(reply["id"].is_null(), "{reply}");
    // A malformed notification is recorded but never answered.
    let problem = rejected(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#);
    assert_eq!(problem.event, event::INVALID_NOTIFICATION);
    assert_eq!(problem.reply, None);
}

#[test]
fn an_error_message_never_echoes_a_huge_value() {
    let huge = "v".repeat(1 << 20);
    let line = json!({ "jsonrpc": huge, "id": 1, "method": "ping" }).to_string();
    let reply = rejected(&line).reply.unwrap();
    assert!(
        reply.to_string().len() < 2048,
        "{} bytes",
        reply.to_string().len()
    );
    let line = json!({ "jsonrpc": "2.0", "id": 2, "method": "x".repeat(1 << 20) }).to_string();
    let reply = rejected(&line).reply.unwrap();
    assert_eq!(reply["id"], 2);
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("at most {MAX_METHOD_BYTES} bytes")),
        "{reply}"
    );
    assert!(reply.to_string().len() < 2048);
}

#[test]
fn requests_pass_unknown_methods_are_noted_and_blank_lines_are_skipped() {
    let ping = classify(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\r\n");
    assert!(matches!(ping, Incoming::Message(_, None)), "{ping:?}");
    let unknown = classify(br#"{"jsonrpc":"2.0","id":6,"method":"tables/drop","params":{}}"#);
    match unknown {
        Incoming::Message(_, Some(problem)) => {
            assert_eq!(problem.event, event::UNKNOWN_METHOD);
            assert_eq!(problem.reply, None);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(classify(b"\n"), Incoming::Blank));
    assert!(matches!(classify(b"  \r\n"), Incoming::Blank));
}

#[test]
fn every_notification_before_the_first_request_is_ignored_counted_and_never_answered() {
    let (mut session, counters) = session();
    let notifications = early_notifications();
    for line in &notifications {
        let problem = kept(&mut session, line);
        assert_eq!(problem.event, event::IGNORED_NOTIFICATION, "{line}");
        assert_eq!(problem.reply, None, "{line}");
        assert_eq!(session.phase(), Phase::Opening);
    }
    assert_eq!(
        counters.snapshot().notifications_ignored,
        notifications.len() as u64
    );
    // A response or an error from the client: the server asked nothing yet.
    for line in [
        json!({ "jsonrpc": "2.0", "id": 4, "result": {} }),
        json!({ "jsonrpc": "2.0", "id": 5, "error": { "code": -1, "message": "no" } }),
    ] {
        let problem = kept(&mut session, &line);
        assert_eq!(problem.event, event::IGNORED_REPLY, "{line}");
        assert_eq!(problem.reply, None);
    }
    assert_eq!(counters.snapshot().replies_ignored, 2);
    // Then the session opens as usual, and notifications reach rmcp.
    delivered(&mut session, &initialize(1));
    assert_eq!(session.phase(), Phase::Serving);
    for line in &notifications[1..] {
        delivered(&mut session, line);
    }
}

#[test]
fn only_initialize_or_a_complete_2026_request_opens_the_session_as_rmcp_does() {
    let (mut session, _) = session();
    let still_opening = [
        request(json!(1), "ping", json!({})),
        request(
            json!(2),
            "server/discover",
            json!({ "_meta": meta("2026-07-28") }),
        ),
        // No _meta, or a revision the server lacks: rmcp refuses it and keeps waiting.
        request(json!(3), "tools/list", json!({})),
        request(
            json!(4),
            "tools/list",
            json!({ "_meta": meta("2099-01-01") }),
        ),
        request(
            json!(5),
            "tools/call",
            json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28" },
                    "name": "query" }),
        ),
    ];
    for line in &still_opening {
        let own = session_id(&delivered(&mut session, line));
        assert_eq!(session.phase(), Phase::Opening, "{line}");
        answer(&mut session, own);
    }
    // A cancellation of the refused request: ignored, the session still opening.
    let problem = kept(&mut session, &cancel(json!(5)));
    assert_eq!(problem.event, event::IGNORED_NOTIFICATION);
    delivered(
        &mut session,
        &request(
            json!(6),
            "tools/list",
            json!({ "_meta": meta("2026-07-28") }),
        ),
    );
    assert_eq!(session.phase(), Phase::Serving);

    let (mut fresh, _) = self::session();
    delivered(&mut fresh, &initialize(1));
    assert_eq!(fresh.phase(), Phase::Serving);
}

#[test]
fn a_duplicate_id_in_flight_is_refused_at_once_and_the_first_keeps_its_answer() {
    let (mut session, counters) = session();
    delivered(&mut session, &initialize(1));
    let call = request(json!(777), "tools/call", json!({ "name": "query" }));
    let first = session_id(&delivered(&mut session, &call));
    let problem = kept(&mut session, &call);
    assert_eq!(problem.event, event::DUPLICATE_ID);
    let reply = problem.reply.unwrap();
    assert_eq!(reply["id"], 777, "{reply}");
    assert_eq!(reply["error"]["code"], INVALID_REQUEST, "{reply}");
    assert_eq!(counters.snapshot().duplicate_ids_refused, 1);
    // A string id of the same digits is another id.
    delivered(
        &mut session,
        &request(json!("777"), "tools/call", json!({ "name": "query" })),
    );
    // The first is answered under the client's id, and the id is free again.
    assert_eq!(answer(&mut session, first)["id"], 777);
    assert!(!session.is_in_flight(&NumberOrString::Number(777)));
    delivered(&mut session, &call);
}

#[test]
fn rmcp_sees_ids_of_the_sessions_own_and_the_client_gets_its_own_back() {
    let (mut session, _) = session();
    let own_init = session_id(&delivered(&mut session, &initialize(42)));
    let own_call = session_id(&delivered(
        &mut session,
        &request(json!("abc"), "tools/call", json!({ "name": "query" })),
    ));
    assert_ne!(own_init, own_call);
    assert_ne!(own_init, NumberOrString::Number(42));
    assert_eq!(answer(&mut session, own_call.clone())["id"], "abc");
    assert_eq!(answer(&mut session, own_init)["id"], 42);
    // An error rmcp sends is mapped back too; one without an id passes as it is.
    let own = session_id(&delivered(
        &mut session,
        &request(json!(9), "nope", json!({})),
    ));
    let mut error: ServerJsonRpcMessage =
        JsonRpcMessage::error(ErrorData::invalid_params("x", None), Some(own));
    session.on_send(&mut error);
    assert_eq!(serde_json::to_value(&error).unwrap()["id"], 9);
    let mut anonymous: ServerJsonRpcMessage =
        JsonRpcMessage::error(ErrorData::invalid_params("x", None), None);
    session.on_send(&mut anonymous);
    assert_eq!(session.in_flight(), 0);
}

#[test]
fn a_cancellation_reaches_rmcp_under_its_own_id_and_one_of_no_request_in_flight_is_ignored() {
    let (mut session, counters) = session();
    delivered(&mut session, &initialize(1));
    let call = request(json!(777), "tools/call", json!({ "name": "query" }));
    let own = session_id(&delivered(&mut session, &call));
    assert!(matches!(
        kept(&mut session, &call).event,
        event::DUPLICATE_ID
    ));
    match delivered(&mut session, &cancel(json!(777))) {
        JsonRpcMessage::Notification(notification) => match notification.notification {
            ClientNotification::CancelledNotification(cancelled) => {
                assert_eq!(cancelled.params.request_id, Some(own));
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    // Cancelled: the id is free, and a second cancel cancels nothing.
    assert!(!session.is_in_flight(&NumberOrString::Number(777)));
    let problem = kept(&mut session, &cancel(json!(777)));
    assert_eq!(problem.event, event::IGNORED_NOTIFICATION);
    assert_eq!(problem.reply, None);
    let problem = kept(&mut session, &cancel(json!("never-sent")));
    assert_eq!(problem.event, event::IGNORED_NOTIFICATION);
    assert_eq!(counters.snapshot().notifications_ignored, 2);
    // The id may be used again.
    delivered(&mut session, &call);
}
