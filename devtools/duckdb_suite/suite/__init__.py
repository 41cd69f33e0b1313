"""DuckDB's sqllogictest suite asked of duckgate (see ../README.md)."""
