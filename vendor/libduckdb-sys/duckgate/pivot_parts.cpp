// duckgate's reading of a PIVOT whose values DuckDB takes from the data (see pivot_parts.h).
//
// Why C++. DuckDB makes the parts in its parser (`PEGTransformer::CreatePivotStatement`), and the
// only way out of the parser for a statement that is not a single SELECT is its C++ API:
// `json_serialize_sql` refuses anything else. What comes out is DuckDB's own text of each part,
// which the caller then checks as a query of its own (DuckDB's parse tree walked, the plan
// judged): what runs is exactly what was checked, whatever this file says.
//
// The shape is recognised strictly: one parsed statement, a MULTI_STATEMENT of CREATE TYPE
// statements that are temporary, named `__pivot_enum_…`, built from a SELECT query and of no
// declared type, and a last statement that is a SELECT. Anything else is not this shape.

#include "pivot_parts.h"

#include "duckdb.hpp"
#include "duckdb/main/capi/capi_internal.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/parser/parsed_data/create_type_info.hpp"
#include "duckdb/parser/parser.hpp"
#include "duckdb/parser/statement/create_statement.hpp"
#include "duckdb/parser/statement/multi_statement.hpp"
#include "duckdb/parser/statement/select_statement.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace duckdb {
namespace {

//! The prefix DuckDB's parser gives the types it makes for a PIVOT's values.
const char *const PIVOT_ENUM_PREFIX = "__pivot_enum_";

//! The name and query of one CREATE TYPE that DuckDB's parser made for a PIVOT, or false.
bool ReadPivotEnum(SQLStatement &statement, string &name, string &query) {
	if (statement.type != StatementType::CREATE_STATEMENT) {
		return false;
	}
	auto &create = statement.Cast<CreateStatement>();
	if (!create.info || create.info->type != CatalogType::TYPE_ENTRY) {
		return false;
	}
	auto &info = create.info->Cast<CreateTypeInfo>();
	if (!info.temporary || !info.query || info.query->type != StatementType::SELECT_STATEMENT ||
	    info.type.id() != LogicalTypeId::INVALID) {
		return false;
	}
	auto &type_name = info.GetTypeName().GetIdentifierName();
	if (type_name.rfind(PIVOT_ENUM_PREFIX, 0) != 0) {
		return false;
	}
	name = type_name;
	query = info.query->ToString();
	return true;
}

void AppendPart(string &out, const string &part) {
	uint64_t size = part.size();
	for (int byte = 0; byte < 8; byte++) {
		out.push_back(static_cast<char>((size >> (8 * byte)) & 0xFF));
	}
	out += part;
}

} // namespace
} // namespace duckdb

extern "C" int32_t duckgate_pivot_parts(duckdb_database database, const char *sql, size_t sql_size, char **parts,
                                        size_t *parts_size) {
	using namespace duckdb;
	if (!database || !sql || !parts || !parts_size) {
		return 0;
	}
	try {
		auto wrapper = reinterpret_cast<DatabaseWrapper *>(database);
		// A connection of the database's own, only for its parser's configuration (the database's
		// settings, such as the lambda syntax); it prepares nothing.
		Connection connection(*wrapper->database);
		Parser parser(*connection.context);
		parser.ParseQuery(string(sql, sql_size));
		if (parser.statements.size() != 1 || parser.statements[0]->type != StatementType::MULTI_STATEMENT) {
			return 0;
		}
		auto &multi = parser.statements[0]->Cast<MultiStatement>();
		if (multi.statements.size() < 2 || multi.statements.back()->type != StatementType::SELECT_STATEMENT) {
			return 0;
		}
		string out;
		AppendPart(out, multi.statements.back()->ToString());
		for (idx_t i = 0; i + 1 < multi.statements.size(); i++) {
			string name;
			string query;
			if (!ReadPivotEnum(*multi.statements[i], name, query)) {
				return 0;
			}
			AppendPart(out, name);
			AppendPart(out, query);
		}
		auto buffer = static_cast<char *>(duckdb_malloc(out.size() == 0 ? 1 : out.size()));
		if (!buffer) {
			return 0;
		}
		std::memcpy(buffer, out.data(), out.size());
		*parts = buffer;
		*parts_size = out.size();
		return 1;
	} catch (std::exception &) {
		return 0;
	}
}
