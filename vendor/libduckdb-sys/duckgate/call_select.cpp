// duckgate's reading of a CALL statement as the query DuckDB binds it as (see call_select.h).
//
// Why C++: `json_serialize_sql` refuses every statement that is not a SELECT, and DuckDB's C API
// has no other way to its parse tree. What comes out is DuckDB's own text of a SELECT built
// around the function expression DuckDB's parser made, which the caller then parses and walks as
// any query, while DuckDB's plan of the CALL itself is what the plan check judges.

#include "call_select.h"

#include "duckdb.hpp"
#include "duckdb/main/capi/capi_internal.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/parser/expression/star_expression.hpp"
#include "duckdb/parser/parser.hpp"
#include "duckdb/parser/query_node/select_node.hpp"
#include "duckdb/parser/statement/call_statement.hpp"
#include "duckdb/parser/statement/select_statement.hpp"
#include "duckdb/parser/tableref/table_function_ref.hpp"

#include <cstring>
#include <string>

extern "C" int32_t duckgate_call_select(duckdb_database database, const char *sql, size_t sql_size, char **select,
                                        size_t *select_size) {
	using namespace duckdb;
	if (!database || !sql || !select || !select_size) {
		return 0;
	}
	try {
		auto wrapper = reinterpret_cast<DatabaseWrapper *>(database);
		// A connection of the database's own, only for its parser's configuration; it prepares
		// nothing.
		Connection connection(*wrapper->database);
		Parser parser(*connection.context);
		parser.ParseQuery(string(sql, sql_size));
		if (parser.statements.size() != 1 || parser.statements[0]->type != StatementType::CALL_STATEMENT) {
			return 0;
		}
		auto &call = parser.statements[0]->Cast<CallStatement>();
		if (!call.function) {
			return 0;
		}
		auto called = make_uniq<TableFunctionRef>();
		called->function = call.function->Copy();
		auto node = make_uniq<SelectNode>();
		node->select_list.push_back(make_uniq<StarExpression>());
		node->from_table = std::move(called);
		SelectStatement statement;
		statement.node = std::move(node);
		auto text = statement.ToString();
		auto buffer = static_cast<char *>(duckdb_malloc(text.size() == 0 ? 1 : text.size()));
		if (!buffer) {
			return 0;
		}
		std::memcpy(buffer, text.data(), text.size());
		*select = buffer;
		*select_size = text.size();
		return 1;
	} catch (std::exception &) {
		return 0;
	}
}
