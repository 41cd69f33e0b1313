/*
 * duckgate's reader of DuckDB's bound plan: the C side.
 *
 * DuckDB calls an optimizer extension with every logical plan it prepares on a database: once
 * as the binder left it (before any of DuckDB's own optimizers) and once optimized. The reader
 * installed by `duckgate_plan_reader_install` walks each of those plans on a connection the
 * caller armed, and hands the caller's judge the facts it found: one record per operator,
 * expression, bound function, type, scanned table, scanned column and bound file, in DuckDB's
 * own enumeration values. A judge that refuses makes DuckDB's prepare fail, so a refused plan
 * never reaches execution; this holds for every plan DuckDB makes on an armed connection,
 * including one it makes again at execution time (a rebind).
 *
 * An operator or expression whose class the walk does not know is reported as
 * DUCKGATE_FACT_UNKNOWN, which the judge refuses: the walk never skips what it cannot read.
 *
 * Strings in facts are UTF-8, not NUL-terminated, and live only for the judge's call.
 */
#ifndef DUCKGATE_PLAN_READER_H
#define DUCKGATE_PLAN_READER_H

#include <stddef.h>
#include <stdint.h>

#include "duckdb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a fact is about; the meaning of its fields depends on it. */
typedef enum duckgate_fact_kind {
	/* code: LogicalOperatorType; label: its name. */
	DUCKGATE_FACT_OPERATOR = 1,
	/* code: ExpressionClass; detail: ExpressionType; label: the class's name. */
	DUCKGATE_FACT_EXPRESSION = 2,
	/* A bound scalar function, operator or cast. path: its qualified name (catalog, schema..., name;
	 * or the name alone for an operator); code: 1 for a cast. */
	DUCKGATE_FACT_SCALAR_FUNCTION = 3,
	/* A bound aggregate (in an aggregate or a window). path: its qualified name; code:
	 * AggregateStateExportMode (0 = the result, 1 = the state exported). */
	DUCKGATE_FACT_AGGREGATE_FUNCTION = 4,
	/* A window function bound by its expression type. code: ExpressionType. */
	DUCKGATE_FACT_WINDOW_FUNCTION = 5,
	/* The function of a LOGICAL_GET (a table scan's `seq_scan`, or a table function). path: its
	 * qualified name. */
	DUCKGATE_FACT_TABLE_FUNCTION = 6,
	/* The stored table a LOGICAL_GET scans. path: catalog, schema path..., table. */
	DUCKGATE_FACT_TABLE_SCAN = 7,
	/* A column a LOGICAL_GET binds (after DUCKGATE_FACT_TABLE_FUNCTION and any
	 * DUCKGATE_FACT_TABLE_SCAN of the same operator). code: 0 a column of the function's or
	 * table's own, 1 the row id, 2 another virtual column; detail: the column's primary index;
	 * label: its name. */
	DUCKGATE_FACT_SCAN_COLUMN = 8,
	/* A type met anywhere (an expression's, a constant's, a cast's, a scan's parameter, ...),
	 * and every type nested in it. code: LogicalTypeId; detail: 1 when the type carries the alias
	 * DuckDB gives aggregate states; label: its name. */
	DUCKGATE_FACT_TYPE = 9,
	/* A file a LOGICAL_GET bound (a multi-file reader's expanded list, or the list a file-metadata or
	 * glob function bound). code 0: one file, label: its path as DuckDB holds it; code 1: the list
	 * was read (before its files), detail: how many there are. A LOGICAL_GET of a file reader with no
	 * code-1 fact is one whose list the reader could not read. */
	DUCKGATE_FACT_FILE = 10,
	/* Something the walk does not know how to read. label: what it was. */
	DUCKGATE_FACT_UNKNOWN = 11,
	/* Only in an optimized plan: the type of one result column of the statement (the plan's root,
	 * or under a LOGICAL_PREPARE root its child; a LOGICAL_EXECUTE's own). detail: the column's
	 * position; label: DuckDB's name for the type (`ENUM('a', 'b')`, `STRUCT("inner" INTEGER)`). For
	 * what a reply names a column's type, not for judging. */
	DUCKGATE_FACT_RESULT_TYPE = 12,
	/* The name of a named parameter a LOGICAL_GET was called with (after its
	 * DUCKGATE_FACT_TABLE_FUNCTION). label: the name. */
	DUCKGATE_FACT_NAMED_PARAMETER = 13,
} duckgate_fact_kind;

/* One piece of text. */
typedef struct duckgate_text {
	const char *data;
	size_t size;
} duckgate_text;

typedef struct duckgate_plan_fact {
	uint32_t kind;
	uint32_t code;
	uint64_t detail;
	duckgate_text label;
	/* A qualified name's parts, outermost first: `path_len` of them at `path`. */
	const duckgate_text *path;
	size_t path_len;
	/* Which operator of the plan this fact belongs to, counted from 0 in the walk's order. */
	uint32_t operator_ordinal;
} duckgate_plan_fact;

/* Which of a prepare's two plans a judge is given. */
typedef enum duckgate_plan_phase {
	/* As the binder made it, before any optimizer ran: every object the query references. */
	DUCKGATE_PLAN_BOUND = 0,
	/* After DuckDB's optimizers: what execution will read. */
	DUCKGATE_PLAN_OPTIMIZED = 1,
} duckgate_plan_phase;

/* What a judge answers. */
typedef enum duckgate_verdict {
	/* The plan may go on. */
	DUCKGATE_VERDICT_ALLOW = 0,
	/* The plan is refused: DuckDB's prepare fails. */
	DUCKGATE_VERDICT_REFUSE = 1,
	/* The connection is not armed: the reader does not judge its plans. */
	DUCKGATE_VERDICT_NOT_ARMED = 2,
} duckgate_verdict;

/*
 * The judge: called on the thread that prepares, with the database's token (given at install),
 * the connection's id (DuckDB's `current_connection_id()`), the phase and the facts. It must not
 * call into DuckDB.
 */
typedef uint32_t (*duckgate_plan_judge)(uint64_t database_token, uint64_t connection_id, uint32_t phase,
                                        const duckgate_plan_fact *facts, size_t fact_count);

/*
 * Install the reader on `database`, whose plans will be handed to `judge` with `database_token`.
 * Call once per database, before any connection prepares a statement. Returns 0, or -1 with a
 * message in `*error` (free it with duckdb_free).
 */
int32_t duckgate_plan_reader_install(duckdb_database database, duckgate_plan_judge judge, uint64_t database_token,
                                     char **error);

/*
 * The name DuckDB gives to value `code` of one of the enumerations facts carry (1: operator type,
 * 2: expression class, 3: expression type, 4: type id, 5: exception type), written to `*name` (free it with
 * duckdb_free); 0, or -1 when the kind is unknown. For tests that the caller's copies of these
 * enumerations agree with DuckDB's.
 */
int32_t duckgate_plan_enum_name(uint32_t enumeration, uint32_t code, char **name);

/*
 * Mount the operator's declared folders on `database`'s file system (folders.cpp): a path that
 * begins with `names[i]` and a slash is read from `dirs[i]` (absolute, canonical), read-only, regular
 * files only. With `check`, also refused: a `..` component, a path that resolves outside its folder, and a
 * file that is one of `database_files` (the database and its WAL) under another name. A glob matching more
 * than `max_files` files or `max_bytes` bytes together, or listing more than ten times `max_files` entries,
 * fails. Under the operator's
 * privacy rules, which `privacy` answers (with `database_token`) for the request being served: a hidden
 * file is a missing one, a hidden column of a Parquet file does not exist for the binder, and the readers
 * that cannot hide a column refuse the files a column rule names. Returns 0, or -1 with a message in
 * `*error` (free it with duckdb_free).
 */
/* The questions `duckgate_folder_privacy_t` answers (non-zero: yes). */
enum duckgate_privacy_question {
	/* The file (`NAME/…`) does not exist for queries. */
	DUCKGATE_PRIVACY_FILE_HIDDEN = 0,
	/* A column rule names the file. */
	DUCKGATE_PRIVACY_FILE_HAS_COLUMN_RULES = 1,
	/* The column of the file does not exist for queries. */
	DUCKGATE_PRIVACY_COLUMN_HIDDEN = 2,
	/* The reader's named parameter (`column`, no file) may not be used on files a column rule
	 * names: it could bind a result column to another file column than its own name's. */
	DUCKGATE_PRIVACY_OPTION_REFUSED = 3,
};

/* duckgate's answer to a question about the request's privacy rules: `file` (and, for
 * DUCKGATE_PRIVACY_COLUMN_HIDDEN, `column`; for DUCKGATE_PRIVACY_OPTION_REFUSED, the option in
 * `column` and an empty `file`) as UTF-8 of the given sizes. */
typedef uint32_t (*duckgate_folder_privacy_t)(uint64_t database_token, uint32_t question, const char *file,
                                              size_t file_size, const char *column, size_t column_size);

int32_t duckgate_folders_mount(duckdb_database database, const duckgate_text *names, const duckgate_text *dirs,
                               size_t count, const duckgate_text *database_files, size_t database_file_count,
                               uint32_t check, uint64_t max_files, uint64_t max_bytes,
                               duckgate_folder_privacy_t privacy, uint64_t database_token, char **error);


/* The declared databases, read through descriptors the worker opened before it confined itself
 * (database_files.cpp): landlock grants no path of them, so these descriptors are the only way
 * the process reaches their bytes. `names[i]` (`duckgate-database://N`, or that and `.wal`) is
 * the name ATTACH opens; `fds[i]` a read-only descriptor the process keeps open for its life
 * (this side never closes it). Opens of these names are served only while
 * `duckgate_database_files_attaching(database, 1)` is in force (duckgate's own ATTACH statements), every
 * other open of the prefix, and every open for writing, fails. Returns 0, or -1 with a message in
 * `*error` (free it with duckdb_free). */
int32_t duckgate_database_files_mount(duckdb_database database, const duckgate_text *names, const int32_t *fds,
                                      size_t count, char **error);

/* Serve (non-zero) or refuse (zero) opens of `database`'s held files' names. Returns 0, or -1 when
 * none are mounted on it. */
int32_t duckgate_database_files_attaching(duckdb_database database, uint32_t on);

/* Release this process's POSIX locks on every held file (F_UNLCK on the held descriptor): what
 * closing a descriptor of the file would do, without a path. Returns 0, or the first errno. */
int32_t duckgate_database_files_unlock(duckdb_database database);

#ifdef __cplusplus
}
#endif

#endif
