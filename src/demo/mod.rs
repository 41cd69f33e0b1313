//! `duckgate demo`: the operator's own command, beside the request path. It writes a synthetic
//! CGM and insulin-pump database ([`database`]) and drives a real `duckgate serve` over it the way
//! an agent would ([`session`], through [`crate::mcp_client`]), printing each call and reply.
//! Nothing here runs inside a server: it opens DuckDB read-write, as only the operator may.

pub mod database;
pub mod session;
