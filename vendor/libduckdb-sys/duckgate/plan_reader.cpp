// duckgate's reader of DuckDB's bound plan (see plan_reader.h for the contract).
//
// Why an optimizer extension. DuckDB hands every optimizer extension the plan of each statement it
// prepares, before its own optimizers run (`pre_optimize_function`) and after them
// (`optimize_function`). Reading the plan there means the plan judged is the very plan that runs:
// there is no second bind, no serialisation that can fail for some plans, and a statement DuckDB
// binds again at execution (a rebind) is judged again.
//
// What the walk reads. Every operator of the tree and, through DuckDB's own enumerators
// (`LogicalOperatorVisitor::EnumerateExpressions`, `ExpressionIterator::EnumerateChildren`, which
// DuckDB's optimizers rely on to see every expression), every expression, plus what those
// enumerators leave out and a check needs: a LOGICAL_GET's function, table, columns, parameters and
// files; a pivot's aggregates; a secure view's output expressions; a lambda's body and captures; a
// sample's size. Every `switch` below lists each enumerator of DuckDB's enumeration and has no
// `default`, and the file is compiled with -Werror=switch: a DuckDB upgrade that adds an operator,
// expression class or type cannot compile until someone decides how it is read.
//
// The walk keeps explicit stacks, so a deep plan cannot overflow the preparing thread's stack.

#include "plan_reader.h"

#include "duckdb.hpp"
#include "duckdb/catalog/catalog_entry/schema_catalog_entry.hpp"
#include "duckdb/catalog/catalog_entry/table_catalog_entry.hpp"
#include "duckdb/common/enum_util.hpp"
#include "duckdb/common/multi_file/multi_file_data.hpp"
#include "duckdb/common/multi_file/multi_file_list.hpp"
#include "duckdb/common/multi_file/multi_file_states.hpp"
#include "duckdb/function/aggregate_state.hpp"
#include "duckdb/main/capi/capi_internal.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/optimizer/optimizer_extension.hpp"
#include "duckdb/planner/expression/list.hpp"
#include "duckdb/planner/expression_iterator.hpp"
#include "duckdb/planner/logical_operator_visitor.hpp"
#include "duckdb/planner/operator/list.hpp"

#include <cstring>
#include <typeinfo>
#include <deque>
#include <string>
#include <vector>

namespace duckdb {
namespace {

//! `ParquetMetaDataBindData` (extension/parquet/parquet_metadata.cpp), member for member.
struct ParquetMetadataFilePathsMirror {
	MultiFileListScanData scan_data;
	shared_ptr<MultiFileList> file_list;
	mutex file_lock;
};
struct ParquetMetadataBindMirror : public TableFunctionData {
	unique_ptr<ParquetMetadataFilePathsMirror> file_paths;
};

//! `GlobFunctionBindData` (src/function/table/glob.cpp), member for member.
struct GlobBindMirror : public TableFunctionData {
	shared_ptr<MultiFileList> file_list;
};

//! The judge and the database's token, kept with the extension.
struct PlanReaderInfo : public OptimizerExtensionInfo {
	PlanReaderInfo(duckgate_plan_judge judge_p, uint64_t token_p) : judge(judge_p), token(token_p) {
	}
	duckgate_plan_judge judge;
	uint64_t token;
};

//! The facts of one plan, and the text they point into.
class PlanFacts {
public:
	void Add(duckgate_fact_kind kind, uint32_t code, uint64_t detail, const string &label,
	         const vector<string> &path = vector<string>()) {
		Pending pending;
		pending.kind = kind;
		pending.code = code;
		pending.detail = detail;
		pending.label = label;
		pending.path = path;
		pending.operator_ordinal = current_operator;
		pending_facts.push_back(std::move(pending));
	}

	void Unknown(const string &what) {
		Add(DUCKGATE_FACT_UNKNOWN, 0, 0, what);
	}

	//! The facts as the C API hands them out; valid while this object lives and is not changed.
	const vector<duckgate_plan_fact> &Finish() {
		paths.clear();
		facts.clear();
		// Sized once, so the pointers taken below stay valid.
		idx_t path_parts = 0;
		for (auto &pending : pending_facts) {
			path_parts += pending.path.size();
		}
		paths.reserve(path_parts);
		for (auto &pending : pending_facts) {
			duckgate_plan_fact fact;
			fact.kind = pending.kind;
			fact.code = pending.code;
			fact.detail = pending.detail;
			fact.label = Text(pending.label);
			fact.path = paths.data() + paths.size();
			fact.path_len = pending.path.size();
			for (auto &part : pending.path) {
				paths.push_back(Text(part));
			}
			fact.operator_ordinal = pending.operator_ordinal;
			facts.push_back(fact);
		}
		return facts;
	}

	uint32_t current_operator = 0;

private:
	struct Pending {
		duckgate_fact_kind kind;
		uint32_t code;
		uint64_t detail;
		string label;
		vector<string> path;
		uint32_t operator_ordinal;
	};

	static duckgate_text Text(const string &text) {
		duckgate_text result;
		result.data = text.data();
		result.size = text.size();
		return result;
	}

	std::deque<Pending> pending_facts;
	vector<duckgate_text> paths;
	vector<duckgate_plan_fact> facts;
};

vector<string> PathOf(const QualifiedName &name) {
	vector<string> result;
	for (auto &part : name.Path()) {
		result.push_back(part.GetIdentifierName());
	}
	return result;
}

//! Reports `type` and every type nested in it.
void AddType(PlanFacts &facts, const LogicalType &root) {
	vector<const LogicalType *> stack {&root};
	while (!stack.empty()) {
		auto &type = *stack.back();
		stack.pop_back();
		auto id = type.id();
		facts.Add(DUCKGATE_FACT_TYPE, static_cast<uint32_t>(id), type.IsAggregateState() ? 1 : 0,
		          LogicalTypeIdToString(id));
		switch (id) {
		case LogicalTypeId::STRUCT:
		case LogicalTypeId::TUPLE:
			for (auto &child : StructType::GetChildTypes(type)) {
				stack.push_back(&child.second);
			}
			break;
		case LogicalTypeId::LIST:
			stack.push_back(&ListType::GetChildType(type));
			break;
		case LogicalTypeId::ARRAY:
			stack.push_back(&ArrayType::GetChildType(type));
			break;
		case LogicalTypeId::MAP:
			stack.push_back(&MapType::KeyType(type));
			stack.push_back(&MapType::ValueType(type));
			break;
		case LogicalTypeId::UNION:
			for (idx_t i = 0; i < UnionType::GetMemberCount(type); i++) {
				stack.push_back(&UnionType::GetMemberType(type, i));
			}
			break;
		case LogicalTypeId::INVALID:
		case LogicalTypeId::SQLNULL:
		case LogicalTypeId::UNKNOWN:
		case LogicalTypeId::ANY:
		case LogicalTypeId::UNBOUND:
		case LogicalTypeId::TEMPLATE:
		case LogicalTypeId::TYPE:
		case LogicalTypeId::BOOLEAN:
		case LogicalTypeId::TINYINT:
		case LogicalTypeId::SMALLINT:
		case LogicalTypeId::INTEGER:
		case LogicalTypeId::BIGINT:
		case LogicalTypeId::DATE:
		case LogicalTypeId::TIME:
		case LogicalTypeId::TIMESTAMP_SEC:
		case LogicalTypeId::TIMESTAMP_MS:
		case LogicalTypeId::TIMESTAMP:
		case LogicalTypeId::TIMESTAMP_NS:
		case LogicalTypeId::DECIMAL:
		case LogicalTypeId::FLOAT:
		case LogicalTypeId::DOUBLE:
		case LogicalTypeId::CHAR:
		case LogicalTypeId::VARCHAR:
		case LogicalTypeId::BLOB:
		case LogicalTypeId::INTERVAL:
		case LogicalTypeId::UTINYINT:
		case LogicalTypeId::USMALLINT:
		case LogicalTypeId::UINTEGER:
		case LogicalTypeId::UBIGINT:
		case LogicalTypeId::TIMESTAMP_TZ:
		case LogicalTypeId::TIMESTAMP_TZ_NS:
		case LogicalTypeId::TIME_TZ:
		case LogicalTypeId::TIME_NS:
		case LogicalTypeId::BIT:
		case LogicalTypeId::STRING_LITERAL:
		case LogicalTypeId::INTEGER_LITERAL:
		case LogicalTypeId::BIGNUM:
		case LogicalTypeId::UHUGEINT:
		case LogicalTypeId::HUGEINT:
		case LogicalTypeId::POINTER:
		case LogicalTypeId::VALIDITY:
		case LogicalTypeId::UUID:
		case LogicalTypeId::GEOMETRY:
		case LogicalTypeId::TABLE:
		case LogicalTypeId::ENUM:
		case LogicalTypeId::LEGACY_AGGREGATE_STATE:
		case LogicalTypeId::LAMBDA:
		case LogicalTypeId::VARIANT:
			// No nested types the judge needs: an ENUM's labels and a DECIMAL's width are values of
			// the type, not types.
			break;
		}
	}
}

void AddValueType(PlanFacts &facts, const Value &value) {
	AddType(facts, value.type());
}

//! The walk of one plan.
class PlanWalk {
public:
	explicit PlanWalk(PlanFacts &facts_p) : facts(facts_p) {
	}

	void Walk(LogicalOperator &root) {
		vector<LogicalOperator *> operators {&root};
		uint32_t ordinal = 0;
		while (!operators.empty()) {
			auto &op = *operators.back();
			operators.pop_back();
			facts.current_operator = ordinal++;
			Operator(op);
			LogicalOperatorVisitor::EnumerateExpressions(op,
			                                             [&](unique_ptr<Expression> *child) { Expressions(*child); });
			for (auto &child : op.children) {
				operators.push_back(child.get());
			}
		}
	}

private:
	void Operator(LogicalOperator &op) {
		facts.Add(DUCKGATE_FACT_OPERATOR, static_cast<uint32_t>(op.type), 0, LogicalOperatorToString(op.type));
		switch (op.type) {
		case LogicalOperatorType::LOGICAL_GET:
			Get(op.Cast<LogicalGet>());
			break;
		case LogicalOperatorType::LOGICAL_PIVOT:
			// The pivot's aggregates are not among the expressions DuckDB's enumerator lists.
			for (auto &aggregate : op.Cast<LogicalPivot>().bound_pivot.aggregates) {
				Expressions(aggregate);
			}
			for (auto &type : op.Cast<LogicalPivot>().bound_pivot.types) {
				AddType(facts, type);
			}
			break;
		case LogicalOperatorType::LOGICAL_SECURE_VIEW: {
			auto &view = op.Cast<LogicalSecureView>();
			for (auto &expression : view.output_expressions) {
				Expressions(expression);
			}
			for (auto &type : view.source_types) {
				AddType(facts, type);
			}
			break;
		}
		case LogicalOperatorType::LOGICAL_SAMPLE: {
			auto &sample = op.Cast<LogicalSample>();
			if (sample.sample_options) {
				AddValueType(facts, sample.sample_options->sample_size);
			}
			break;
		}
		case LogicalOperatorType::LOGICAL_CHUNK_GET:
		case LogicalOperatorType::LOGICAL_DELIM_GET:
		case LogicalOperatorType::LOGICAL_EXPRESSION_GET:
		case LogicalOperatorType::LOGICAL_DUMMY_SCAN:
		case LogicalOperatorType::LOGICAL_EMPTY_RESULT:
		case LogicalOperatorType::LOGICAL_CTE_REF:
			// Rows of their own: their types are what they hold.
			for (auto &type : op.types) {
				AddType(facts, type);
			}
			break;
		case LogicalOperatorType::LOGICAL_INVALID:
		case LogicalOperatorType::LOGICAL_PROJECTION:
		case LogicalOperatorType::LOGICAL_FILTER:
		case LogicalOperatorType::LOGICAL_AGGREGATE_AND_GROUP_BY:
		case LogicalOperatorType::LOGICAL_WINDOW:
		case LogicalOperatorType::LOGICAL_UNNEST:
		case LogicalOperatorType::LOGICAL_LIMIT:
		case LogicalOperatorType::LOGICAL_ORDER_BY:
		case LogicalOperatorType::LOGICAL_TOP_N:
		case LogicalOperatorType::LOGICAL_DISTINCT:
		case LogicalOperatorType::LOGICAL_JOIN:
		case LogicalOperatorType::LOGICAL_DELIM_JOIN:
		case LogicalOperatorType::LOGICAL_COMPARISON_JOIN:
		case LogicalOperatorType::LOGICAL_ANY_JOIN:
		case LogicalOperatorType::LOGICAL_CROSS_PRODUCT:
		case LogicalOperatorType::LOGICAL_POSITIONAL_JOIN:
		case LogicalOperatorType::LOGICAL_ASOF_JOIN:
		case LogicalOperatorType::LOGICAL_DEPENDENT_JOIN:
		case LogicalOperatorType::LOGICAL_UNION:
		case LogicalOperatorType::LOGICAL_EXCEPT:
		case LogicalOperatorType::LOGICAL_INTERSECT:
		case LogicalOperatorType::LOGICAL_RECURSIVE_CTE:
		case LogicalOperatorType::LOGICAL_MATERIALIZED_CTE:
		case LogicalOperatorType::LOGICAL_EXPLAIN:
			// All they hold is in their expressions and children.
			break;
		case LogicalOperatorType::LOGICAL_PREPARE:
			// DuckDB's C API prepares every statement as `PREPARE <generated name> AS <statement>`:
			// the statement's plan is this operator's child. The judge allows it only at the root.
			break;
		case LogicalOperatorType::LOGICAL_EXECUTE:
			// Runs a statement prepared before, whose plan was judged then, and is judged again
			// whenever DuckDB binds it anew. The judge allows it only at the root.
			break;
		case LogicalOperatorType::LOGICAL_COPY_TO_FILE:
		case LogicalOperatorType::LOGICAL_COPY_DATABASE:
		case LogicalOperatorType::LOGICAL_INSERT:
		case LogicalOperatorType::LOGICAL_DELETE:
		case LogicalOperatorType::LOGICAL_UPDATE:
		case LogicalOperatorType::LOGICAL_MERGE_INTO:
		case LogicalOperatorType::LOGICAL_TRIGGER:
		case LogicalOperatorType::LOGICAL_ALTER:
		case LogicalOperatorType::LOGICAL_CREATE_TABLE:
		case LogicalOperatorType::LOGICAL_CREATE_INDEX:
		case LogicalOperatorType::LOGICAL_CREATE_SEQUENCE:
		case LogicalOperatorType::LOGICAL_CREATE_VIEW:
		case LogicalOperatorType::LOGICAL_CREATE_SCHEMA:
		case LogicalOperatorType::LOGICAL_CREATE_MACRO:
		case LogicalOperatorType::LOGICAL_DROP:
		case LogicalOperatorType::LOGICAL_PRAGMA:
		case LogicalOperatorType::LOGICAL_TRANSACTION:
		case LogicalOperatorType::LOGICAL_CREATE_TYPE:
		case LogicalOperatorType::LOGICAL_ATTACH:
		case LogicalOperatorType::LOGICAL_DETACH:
		case LogicalOperatorType::LOGICAL_CREATE_TRIGGER:
		case LogicalOperatorType::LOGICAL_EXPORT:
		case LogicalOperatorType::LOGICAL_VACUUM:
		case LogicalOperatorType::LOGICAL_SET:
		case LogicalOperatorType::LOGICAL_LOAD:
		case LogicalOperatorType::LOGICAL_RESET:
		case LogicalOperatorType::LOGICAL_UPDATE_EXTENSIONS:
		case LogicalOperatorType::LOGICAL_CONNECT:
		case LogicalOperatorType::LOGICAL_DISCONNECT:
		case LogicalOperatorType::LOGICAL_EXTERNAL_RESOURCE:
		case LogicalOperatorType::LOGICAL_CREATE_SECRET:
		case LogicalOperatorType::LOGICAL_EXTENSION_OPERATOR:
			// Statements, not queries: their payload is not read, because the judge refuses them by
			// their operator type whatever they hold.
			facts.Unknown("the contents of " + LogicalOperatorToString(op.type));
			break;
		}
	}

	void Get(LogicalGet &get) {
		facts.Add(DUCKGATE_FACT_TABLE_FUNCTION, 0, 0, get.function.GetName().GetIdentifierName(),
		          PathOf(get.function.GetQualifiedName()));
		auto table = get.GetTable();
		if (table) {
			vector<string> path;
			path.push_back(table->ParentCatalog().GetName().GetIdentifierName());
			for (auto &schema : table->ParentSchema().GetSchemaPath()) {
				path.push_back(schema.GetIdentifierName());
			}
			path.push_back(table->name.GetIdentifierName());
			facts.Add(DUCKGATE_FACT_TABLE_SCAN, 0, 0, table->name.GetIdentifierName(), path);
		}
		for (auto &column : get.GetColumnIds()) {
			uint32_t kind;
			string name;
			if (column.IsRowIdColumn()) {
				kind = 1;
				name = "rowid";
			} else if (column.IsVirtualColumn()) {
				kind = 2;
				auto entry = get.virtual_columns.find(column.GetPrimaryIndex());
				name = entry == get.virtual_columns.end() ? string() : entry->second.name.GetIdentifierName();
			} else {
				kind = 0;
				auto index = column.GetPrimaryIndex();
				name = index < get.names.size() ? get.names[index].GetIdentifierName() : string();
			}
			facts.Add(DUCKGATE_FACT_SCAN_COLUMN, kind, column.GetPrimaryIndex(), name);
		}
		for (auto &parameter : get.parameters) {
			AddValueType(facts, parameter);
		}
		for (auto &named : get.named_parameters) {
			facts.Add(DUCKGATE_FACT_NAMED_PARAMETER, 0, 0, named.first.GetIdentifierName());
			AddValueType(facts, named.second);
		}
		for (auto &type : get.input_table_types) {
			AddType(facts, type);
		}
		Files(get);
	}

	//! The files a multi-file reader, a Parquet metadata function or `glob` bound, as DuckDB expanded
	//! them: first a fact that the list was read, then one per file.
	void Files(LogicalGet &get) {
		if (!get.bind_data) {
			return;
		}
		auto list = BoundFileList(*get.bind_data);
		if (!list) {
			return;
		}
		auto files = list->GetAllFiles();
		facts.Add(DUCKGATE_FACT_FILE, 1, files.size(), string());
		for (auto &file : files) {
			facts.Add(DUCKGATE_FACT_FILE, 0, 0, file.path);
		}
	}

	//! The file list in a table function's bind data, where the reader knows its class. DuckDB defines
	//! the bind data of the Parquet metadata functions and of `glob` in their .cpp files, so their
	//! layouts are restated below (`ParquetMetadataBindMirror`, `GlobBindMirror`) and used only for an
	//! object whose dynamic type has exactly that class's name; the integration tests read files
	//! through each of them and see the plan check refuse a list that leaves the folders.
	static optional_ptr<MultiFileList> BoundFileList(FunctionData &bind_data) {
		if (auto multi_file = dynamic_cast<MultiFileBindData *>(&bind_data)) {
			return multi_file->file_list.get();
		}
		const string type_name = typeid(bind_data).name();
		if (type_name == "N6duckdb23ParquetMetaDataBindDataE") {
			auto &mirror = reinterpret_cast<ParquetMetadataBindMirror &>(bind_data);
			if (!mirror.file_paths) {
				return nullptr;
			}
			return mirror.file_paths->file_list.get();
		}
		if (type_name == "N6duckdb20GlobFunctionBindDataE") {
			return reinterpret_cast<GlobBindMirror &>(bind_data).file_list.get();
		}
		return nullptr;
	}

	//! `root` and every expression below it.
	void Expressions(unique_ptr<Expression> &root) {
		if (!root) {
			return;
		}
		vector<Expression *> stack {root.get()};
		while (!stack.empty()) {
			auto &expression = *stack.back();
			stack.pop_back();
			One(expression, stack);
			ExpressionIterator::EnumerateChildren(expression,
			                                      [&](unique_ptr<Expression> &child) { stack.push_back(child.get()); });
		}
	}

	void One(Expression &expression, vector<Expression *> &stack) {
		auto expression_class = expression.GetExpressionClass();
		facts.Add(DUCKGATE_FACT_EXPRESSION, static_cast<uint32_t>(expression_class),
		          static_cast<uint64_t>(expression.GetExpressionType()), ExpressionClassToString(expression_class));
		AddType(facts, expression.GetReturnType());
		switch (expression_class) {
		case ExpressionClass::BOUND_FUNCTION: {
			auto &function = expression.Cast<BoundFunctionExpression>();
			bool cast = BoundCastExpression::IsCast(function);
			facts.Add(DUCKGATE_FACT_SCALAR_FUNCTION, cast ? 1 : 0, 0, function.Function().GetName().GetIdentifierName(),
			          PathOf(function.Function().GetQualifiedName()));
			for (auto &argument : function.Function().GetArguments()) {
				AddType(facts, argument);
			}
			break;
		}
		case ExpressionClass::BOUND_AGGREGATE: {
			auto &aggregate = expression.Cast<BoundAggregateExpression>();
			facts.Add(DUCKGATE_FACT_AGGREGATE_FUNCTION, static_cast<uint32_t>(aggregate.StateExportMode()), 0,
			          aggregate.Function().GetName().GetIdentifierName(),
			          PathOf(aggregate.Function().GetQualifiedName()));
			for (auto &argument : aggregate.Function().GetArguments()) {
				AddType(facts, argument);
			}
			break;
		}
		case ExpressionClass::BOUND_WINDOW: {
			auto &window = expression.Cast<BoundWindowExpression>();
			if (window.AggregateFunction()) {
				// An aggregate over a window: DuckDB binds it as the aggregate inside a window function
				// named after its expression type (WINDOW_AGGREGATE); the aggregate is what computes.
				facts.Add(DUCKGATE_FACT_AGGREGATE_FUNCTION, static_cast<uint32_t>(AggregateStateExportMode::NONE), 0,
				          window.AggregateFunction()->GetName().GetIdentifierName(),
				          PathOf(window.AggregateFunction()->GetQualifiedName()));
			} else if (window.WindowFunction()) {
				facts.Add(DUCKGATE_FACT_WINDOW_FUNCTION, static_cast<uint32_t>(window.GetExpressionType()), 0,
				          window.WindowFunction()->GetName().GetIdentifierName(),
				          PathOf(window.WindowFunction()->GetQualifiedName()));
			} else {
				facts.Add(DUCKGATE_FACT_WINDOW_FUNCTION, static_cast<uint32_t>(window.GetExpressionType()), 0,
				          ExpressionTypeToString(window.GetExpressionType()));
			}
			break;
		}
		case ExpressionClass::BOUND_LAMBDA: {
			// DuckDB's own enumerator does not enter a lambda's body or its captures.
			auto &lambda = expression.Cast<BoundLambdaExpression>();
			if (lambda.LambdaExprMutable()) {
				stack.push_back(lambda.LambdaExprMutable().get());
			}
			for (auto &capture : lambda.CapturesMutable()) {
				stack.push_back(capture.get());
			}
			break;
		}
		case ExpressionClass::BOUND_CONSTANT:
			AddValueType(facts, expression.Cast<BoundConstantExpression>().GetValue());
			break;
		case ExpressionClass::BOUND_CASE:
		case ExpressionClass::BOUND_COLUMN_REF:
		case ExpressionClass::BOUND_CONJUNCTION:
		case ExpressionClass::BOUND_DEFAULT:
		case ExpressionClass::BOUND_OPERATOR:
		case ExpressionClass::BOUND_PARAMETER:
		case ExpressionClass::BOUND_REF:
		case ExpressionClass::BOUND_UNNEST:
		case ExpressionClass::BOUND_LAMBDA_REF:
			// Their children, if any, are enumerated by DuckDB's iterator; their type is reported above.
			break;
		case ExpressionClass::INVALID:
		case ExpressionClass::AGGREGATE:
		case ExpressionClass::CASE:
		case ExpressionClass::CAST:
		case ExpressionClass::COLUMN_REF:
		case ExpressionClass::COMPARISON:
		case ExpressionClass::CONJUNCTION:
		case ExpressionClass::CONSTANT:
		case ExpressionClass::DEFAULT:
		case ExpressionClass::FUNCTION:
		case ExpressionClass::OPERATOR:
		case ExpressionClass::STAR:
		case ExpressionClass::SUBQUERY:
		case ExpressionClass::WINDOW:
		case ExpressionClass::PARAMETER:
		case ExpressionClass::COLLATE:
		case ExpressionClass::LAMBDA:
		case ExpressionClass::POSITIONAL_REFERENCE:
		case ExpressionClass::BETWEEN:
		case ExpressionClass::LAMBDA_REF:
		case ExpressionClass::TYPE:
		case ExpressionClass::LEGACY_BOUND_CAST:
		case ExpressionClass::LEGACY_BOUND_COMPARISON:
		case ExpressionClass::LEGACY_BOUND_BETWEEN:
		case ExpressionClass::BOUND_SUBQUERY:
		case ExpressionClass::BOUND_EXPANDED:
			// Parsed or binder-only classes, and subqueries (which planning turns into joins): not
			// expected in a plan, so not read.
			facts.Unknown("an expression of class " + ExpressionClassToString(expression_class));
			break;
		}
	}

	PlanFacts &facts;
};

//! The result column types of an optimized plan, by DuckDB's own names. The statement's result is
//! the root's, or under the C API's LOGICAL_PREPARE root its child's. Types are resolved here as
//! DuckDB's physical planner resolves them next; a plan whose types cannot be resolved yet gives
//! none (the names are for the reply, never for a verdict).
void AddResultTypes(PlanFacts &facts, LogicalOperator &root) {
	LogicalOperator *result = &root;
	if (root.type == LogicalOperatorType::LOGICAL_PREPARE) {
		if (root.children.size() != 1) {
			return;
		}
		result = root.children[0].get();
	}
	try {
		result->ResolveOperatorTypes();
	} catch (std::exception &) {
		return;
	}
	facts.current_operator = 0;
	for (idx_t i = 0; i < result->types.size(); i++) {
		facts.Add(DUCKGATE_FACT_RESULT_TYPE, 0, i, result->types[i].ToString());
	}
}

uint32_t Judge(OptimizerExtensionInput &input, duckgate_plan_phase phase, LogicalOperator &plan) {
	auto &info = static_cast<PlanReaderInfo &>(*input.info);
	PlanFacts facts;
	PlanWalk(facts).Walk(plan);
	if (phase == DUCKGATE_PLAN_OPTIMIZED) {
		AddResultTypes(facts, plan);
	}
	auto &handed = facts.Finish();
	return info.judge(info.token, input.context.GetConnectionId(), static_cast<uint32_t>(phase), handed.data(),
	                  handed.size());
}

void JudgeOrThrow(OptimizerExtensionInput &input, duckgate_plan_phase phase, unique_ptr<LogicalOperator> &plan) {
	if (!plan) {
		throw InternalException("duckgate: an empty plan reached the plan reader");
	}
	switch (Judge(input, phase, *plan)) {
	case DUCKGATE_VERDICT_ALLOW:
	case DUCKGATE_VERDICT_NOT_ARMED:
		return;
	default:
		// The judge keeps the reason; this message only has to stop the prepare.
		throw PermissionException("duckgate refused this query's plan");
	}
}

void JudgeBound(OptimizerExtensionInput &input, unique_ptr<LogicalOperator> &plan) {
	JudgeOrThrow(input, DUCKGATE_PLAN_BOUND, plan);
}

void JudgeOptimized(OptimizerExtensionInput &input, unique_ptr<LogicalOperator> &plan) {
	JudgeOrThrow(input, DUCKGATE_PLAN_OPTIMIZED, plan);
}

char *CopyForC(const string &text) {
	auto result = static_cast<char *>(duckdb_malloc(text.size() + 1));
	if (result) {
		std::memcpy(result, text.c_str(), text.size() + 1);
	}
	return result;
}

} // namespace
} // namespace duckdb

extern "C" int32_t duckgate_plan_reader_install(duckdb_database database, duckgate_plan_judge judge,
                                                uint64_t database_token, char **error) {
	using namespace duckdb;
	try {
		if (!database || !judge) {
			throw InvalidInputException("duckgate_plan_reader_install: no database or no judge");
		}
		auto wrapper = reinterpret_cast<DatabaseWrapper *>(database);
		auto &instance = *wrapper->database->instance;
		OptimizerExtension extension;
		extension.pre_optimize_function = JudgeBound;
		extension.optimize_function = JudgeOptimized;
		extension.optimizer_info = make_shared_ptr<PlanReaderInfo>(judge, database_token);
		OptimizerExtension::Register(DBConfig::GetConfig(instance), std::move(extension));
		return 0;
	} catch (std::exception &ex) {
		if (error) {
			*error = CopyForC(ErrorData(ex).Message());
		}
		return -1;
	}
}

extern "C" int32_t duckgate_plan_enum_name(uint32_t enumeration, uint32_t code, char **name) {
	using namespace duckdb;
	try {
		string text;
		switch (enumeration) {
		case 1:
			text = EnumUtil::ToString(static_cast<LogicalOperatorType>(code));
			break;
		case 2:
			text = EnumUtil::ToString(static_cast<ExpressionClass>(code));
			break;
		case 3:
			text = EnumUtil::ToString(static_cast<ExpressionType>(code));
			break;
		case 4:
			text = EnumUtil::ToString(static_cast<LogicalTypeId>(code));
			break;
		case 5:
			text = EnumUtil::ToString(static_cast<ExceptionType>(code));
			break;
		default:
			return -1;
		}
		*name = CopyForC(text);
		return 0;
	} catch (std::exception &) {
		return -1;
	}
}
