//! How a result's values travel as JSON, and what JSON weighs: the encoding the worker writes
//! each DuckDB value in (`engine::convert`) and the `query` tool states to the agent, and the
//! byte count both sides budget a reply by.

/// The JSON encoding of each DuckDB type, as the `query` tool's output schema states it.
pub const VALUE_ENCODING: &str = "Values by DuckDB type: SQL NULL is null; integers are numbers \
     up to 2^53-1 and strings beyond; DECIMAL, HUGEINT beyond 2^53 and BIGNUM are strings of \
     exact digits; FLOAT/DOUBLE are numbers or \"NaN\"/\"Infinity\"/\"-Infinity\"; DATE, TIME, \
     TIMESTAMP are ISO 8601 text; TIMESTAMP WITH TIME ZONE is local time in the server's \
     zone with its UTC offset (2026-11-26T22:10:00-05:00; Z when that zone is UTC), \
     TIMESTAMPTZ_NS likewise (+00:00 in UTC); INTERVAL is an ISO 8601 duration with a sign per component (P1Y2M3DT4H5M6.5S); TIME WITH \
     TIME ZONE and TIME_NS are DuckDB's text; BLOB and GEOMETRY are base64 (WKB for GEOMETRY), \
     BIT is its 0/1 text; UUID and ENUM are text; JSON is its JSON text, so a JSON null is the \
     string \"null\"; VARIANT is its JSON value; LIST and ARRAY are arrays; STRUCT is an object \
     in field order; an unnamed STRUCT (TUPLE) is an array; MAP is an array of \
     {\"key\", \"value\"} objects; UNION is its member's value.";

/// Bytes `value` takes as compact JSON, without building the string (the worker's row cap in
/// `engine::run`, the reply budget in `mcp::tools::query` and the envelope's in
/// `mcp::envelope`).
pub fn json_size(value: &impl serde::Serialize) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing to a counter cannot fail and the values are plain JSON.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}
