#include "duckdb/duckdb_v2.h"
#include "duckdb/duckdb_static_extension.h"
