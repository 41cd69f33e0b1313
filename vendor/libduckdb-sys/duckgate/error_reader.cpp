// duckgate's reader of DuckDB's typed errors (see error_reader.h for the contract).
//
// Why a ClientContextState. DuckDB calls `QueryEnd(context, error)` of every state registered on a
// connection when a query ends, with the ErrorData the query failed with; a prepare runs as a
// query (a PREPARE statement), so its bind and plan errors end there too, as does an error found
// while a streamed result is fetched (`ClientContext::FailQueryInternal`). The ErrorData keeps
// what the C API's text drops: the ExceptionType and the extra information.
//
// Why per thread. The `duckdb` crate reports a failure as text, with no handle of the connection;
// DuckDB ends the failed query on the thread that holds the connection's lock, the same thread
// that called into DuckDB and is handed the failure. The caller checks that the recorded message
// is the very text it was handed before it trusts the record.

#include "error_reader.h"

#include "duckdb.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/main/capi/capi_internal.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/client_context_state.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/planner/extension_callback.hpp"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace duckdb {
namespace {

//! The error the last query this thread ended failed with.
struct RecordedError {
	bool present = false;
	uint64_t database_token = 0;
	uint64_t connection_id = 0;
	ExceptionType type = ExceptionType::INVALID;
	string message;
	vector<std::pair<string, string>> fields;

	void Clear() {
		present = false;
		message.clear();
		fields.clear();
	}
};

thread_local RecordedError recorded_error;

//! Records each failed query's ErrorData of one connection.
class ErrorRecorder : public ClientContextState {
public:
	explicit ErrorRecorder(uint64_t token_p) : token(token_p) {
	}

	void QueryBegin(ClientContext &) override {
		recorded_error.Clear();
	}

	void QueryEnd(ClientContext &context, optional_ptr<ErrorData> error) override {
		recorded_error.Clear();
		if (!error || !error->HasError()) {
			return;
		}
		recorded_error.present = true;
		recorded_error.database_token = token;
		recorded_error.connection_id = context.GetConnectionId();
		recorded_error.type = error->Type();
		recorded_error.message = error->Message();
		for (auto &entry : error->ExtraInfo()) {
			recorded_error.fields.emplace_back(entry.first, entry.second);
		}
	}

private:
	uint64_t token;
};

//! Gives every connection of the database its recorder as it opens.
class ErrorReaderCallback : public ExtensionCallback {
public:
	explicit ErrorReaderCallback(uint64_t token_p) : token(token_p) {
	}

	void OnConnectionOpened(ClientContext &context) override {
		context.registered_state->Insert("duckgate_error_reader", make_shared_ptr<ErrorRecorder>(token));
	}

private:
	uint64_t token;
};

char *CopyErrorForC(const string &text) {
	auto result = static_cast<char *>(duckdb_malloc(text.size() + 1));
	if (result) {
		std::memcpy(result, text.c_str(), text.size() + 1);
	}
	return result;
}

duckgate_text TextOf(const string &text) {
	duckgate_text result;
	result.data = text.data();
	result.size = text.size();
	return result;
}

} // namespace
} // namespace duckdb

extern "C" int32_t duckgate_error_reader_install(duckdb_database database, uint64_t database_token, char **error) {
	using namespace duckdb;
	try {
		if (!database) {
			throw InvalidInputException("duckgate_error_reader_install: no database");
		}
		auto wrapper = reinterpret_cast<DatabaseWrapper *>(database);
		auto &instance = *wrapper->database->instance;
		ExtensionCallback::Register(DBConfig::GetConfig(instance),
		                            make_shared_ptr<ErrorReaderCallback>(database_token));
		return 0;
	} catch (std::exception &ex) {
		if (error) {
			*error = CopyErrorForC(ErrorData(ex).Message());
		}
		return -1;
	}
}

extern "C" int32_t duckgate_error_reader_take(duckgate_error_visitor visitor, void *context) {
	using namespace duckdb;
	if (!visitor || !recorded_error.present) {
		return 0;
	}
	// Moved out first: the visitor must not see the record change under it, and a record is
	// handed out once.
	RecordedError taken = std::move(recorded_error);
	recorded_error.Clear();
	vector<duckgate_error_field> fields;
	fields.reserve(taken.fields.size());
	for (auto &entry : taken.fields) {
		duckgate_error_field field;
		field.key = TextOf(entry.first);
		field.value = TextOf(entry.second);
		fields.push_back(field);
	}
	duckgate_error handed;
	handed.database_token = taken.database_token;
	handed.connection_id = taken.connection_id;
	handed.exception_type = static_cast<uint32_t>(taken.type);
	handed.message = TextOf(taken.message);
	handed.fields = fields.data();
	handed.field_count = fields.size();
	visitor(context, &handed);
	return 1;
}
