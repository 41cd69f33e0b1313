//! duckgate: a sandboxed, read-only DuckDB query gateway for AI agents over MCP.

pub mod error;
pub mod privacy;
pub mod validate;

#[cfg(feature = "engine")]
pub mod audit;
#[cfg(feature = "engine")]
pub mod engine;
#[cfg(feature = "engine")]
pub mod gateway;
#[cfg(feature = "engine")]
pub mod mcp;
#[cfg(feature = "engine")]
pub mod protocol;
#[cfg(feature = "engine")]
pub mod sandbox;
#[cfg(feature = "engine")]
pub mod settings;
#[cfg(feature = "engine")]
pub mod time_zone;
