// duckgate's declared folders, as a DuckDB file system (see plan_reader.h for the contract).
//
// Why a file system of its own. The agent names a file by its folder's name (`exports/x.parquet`),
// and no reply may carry the host path behind it. Registered with DuckDB's virtual file system,
// this one handles exactly the paths that begin with a declared name and a slash, and maps them to
// the folder on the host only where it calls the kernel. Every name DuckDB keeps, shows and binds
// (a multi-file reader's list, `filename`, hive partitions, errors, plans) is the agent's own
// `NAME/…`, never rewritten text. And it needs nothing else of DuckDB's: the worker keeps DuckDB's
// local file system switched off (`disabled_filesystems`), so SQL still cannot open any other path,
// the database file included.
//
// What it refuses, when asked to check (a worker's hardened DuckDB; the test bypass of DuckDB's
// hardening turns the check off so that the kernel is shown to hold alone): a `..` component, a
// path that resolves (symbolic links followed) outside its folder, a file that is the database or
// its WAL under another name (a hard link: the same inode, which landlock, granting by path, lets
// through), checked on the open descriptor; and any open for writing. Always: anything but a
// regular file (a FIFO would block the reader, a device node has side effects), checked before
// the open and again on the open descriptor; a glob matching more than the operator's cap of
// files, which stops the expansion there (an error about the query's pattern: InvalidInput, whose
// words DuckDB's error type says are the query's, so they reach the agent under privacy rules too,
// naming the flag); and a glob that lists more than `LISTED_PER_FILE`
// times that many directory entries, which stops the listing there (DuckDB's own glob lists a
// whole directory before it matches any of it: a folder of a million files would otherwise be
// listed and `stat`ed whole before the cap on matches could stop it).

#include "plan_reader.h"
#include "descriptor_files.h"

#include "duckdb.hpp"
#include "duckdb/catalog/catalog.hpp"
#include "duckdb/catalog/catalog_entry/schema_catalog_entry.hpp"
#include "duckdb/catalog/catalog_entry/table_function_catalog_entry.hpp"
#include "duckdb/common/file_system.hpp"
#include "duckdb/common/local_file_system.hpp"
#include "duckdb/common/multi_file/multi_file_list.hpp"
#include "duckdb/common/multi_file/multi_file_reader.hpp"
#include "duckdb/common/virtual_file_system.hpp"
#include "duckdb/main/capi/capi_internal.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace duckdb {
namespace {

struct DeclaredFolder {
	//! The name the agent writes.
	string name;
	//! The directory on the host, canonical, without a trailing slash.
	string dir;
};

//! What a path names: the folder, and the part after `NAME/`.
struct FolderPath {
	const DeclaredFolder *folder;
	string relative;

	string Host() const {
		return relative.empty() ? folder->dir : folder->dir + "/" + relative;
	}
};

const char *KindOf(mode_t mode) {
	if (S_ISFIFO(mode)) {
		return "a FIFO";
	}
	if (S_ISCHR(mode)) {
		return "a character device";
	}
	if (S_ISBLK(mode)) {
		return "a block device";
	}
	if (S_ISSOCK(mode)) {
		return "a socket";
	}
	if (S_ISDIR(mode)) {
		return "a directory";
	}
	return "not a regular file";
}

//! The operator's privacy rules, asked of duckgate's side (`duckgate_folder_privacy_t`): set once,
//! when the folders are mounted, for the one database of this process; the rules themselves are
//! the request's, which duckgate hands its side before the request's first statement.
duckgate_folder_privacy_t privacy_callback = nullptr;
uint64_t privacy_token = 0;

bool AskPrivacy(uint32_t question, const string &file, const string &column = string()) {
	return privacy_callback &&
	       privacy_callback(privacy_token, question, file.data(), file.size(), column.data(), column.size()) != 0;
}

//! The file does not exist for queries (`hide_tables` with a pattern of files).
bool FileHidden(const string &file) {
	return AskPrivacy(DUCKGATE_PRIVACY_FILE_HIDDEN, file);
}

//! A column rule names the file (`hide_columns` with a pattern of files).
bool FileHasColumnRules(const string &file) {
	return AskPrivacy(DUCKGATE_PRIVACY_FILE_HAS_COLUMN_RULES, file);
}

//! The column of the file does not exist for queries.
bool ColumnHidden(const string &file, const string &column) {
	return AskPrivacy(DUCKGATE_PRIVACY_COLUMN_HIDDEN, file, column);
}

//! The reader's named parameter may not be used on files a column rule names: duckgate's one
//! classification of the Parquet readers' parameters answers (`parameter_keeps_column_names` in
//! src/plan_policy/facts.rs, by which the plan check judges too). No one to ask: refused.
bool OptionRefused(const string &option) {
	return !privacy_callback || AskPrivacy(DUCKGATE_PRIVACY_OPTION_REFUSED, string(), option);
}

//! How many directory entries one pattern may list per file it may match: room for a pattern that
//! picks a few files out of a large folder, and a bound on one that would list a million.
constexpr idx_t LISTED_PER_FILE = 10;

//! DuckDB's own local file system, whose listings count against one pattern's bound: the glob
//! below runs on it, so every directory it reads is read through `ListFilesExtended`.
class CountingLocalFileSystem : public LocalFileSystem {
public:
	CountingLocalFileSystem(string pattern_p, idx_t max_listed_p)
	    : pattern(std::move(pattern_p)), max_listed(max_listed_p) {
	}

protected:
	bool ListFilesExtended(const string &directory, const std::function<void(OpenFileInfo &info)> &callback,
	                       optional_ptr<FileOpener> opener) override {
		return LocalFileSystem::ListFilesExtended(
		    directory,
		    [&](OpenFileInfo &info) {
			    if (++listed > max_listed) {
				    throw InvalidInputException("The pattern \"%s\" looks through more than %llu files and folders, ten for "
				                      "each file one pattern may match (--files-max-count): name fewer files, e.g. "
				                      "one subfolder or a narrower pattern",
				                      pattern, static_cast<unsigned long long>(max_listed));
			    }
			    callback(info);
		    },
		    opener);
	}

private:
	string pattern;
	idx_t max_listed;
	idx_t listed = 0;
};

class DeclaredFoldersFileSystem : public duckgate_files::DescriptorFileSystem {
public:
	DeclaredFoldersFileSystem(vector<DeclaredFolder> folders_p, vector<string> database_files_p, bool check_p,
	                          idx_t max_files_p, idx_t max_bytes_p)
	    : folders(std::move(folders_p)), database_files(std::move(database_files_p)), check(check_p),
	      max_files(max_files_p), max_bytes(max_bytes_p), local(FileSystem::CreateLocal()) {
	}

	string GetName() const override {
		return "DuckgateDeclaredFolders";
	}

	bool CanHandleFile(const string &path) override {
		return Find(path) != nullptr;
	}

	unique_ptr<FileHandle> OpenFile(const string &path, FileOpenFlags flags, optional_ptr<FileOpener> opener) override {
		if (flags.OpenForWriting()) {
			throw PermissionException("Cannot write \"%s\": the declared folders are read-only", path);
		}
		auto named = Resolve(path);
		auto host = named.Host();
		struct stat before;
		// A hidden file is a missing one: the same answer, from the same place.
		auto missing = FileHidden(path) ? ENOENT : 0;
		if (missing != 0 || ::stat(host.c_str(), &before) != 0) {
			if (missing == 0) {
				missing = errno;
			}
			if (missing == ENOENT && flags.ReturnNullIfNotExists()) {
				return nullptr;
			}
			throw IOException("Cannot open file \"%s\": %s", path, std::strerror(missing));
		}
		if (!S_ISREG(before.st_mode)) {
			throw IOException("Cannot read \"%s\": it is %s; only regular files in a declared folder can be read",
			                  path, KindOf(before.st_mode));
		}
		// O_NONBLOCK: should the file have been swapped for a FIFO since the check, the open does
		// not wait for a writer; the descriptor's own type is checked again below.
		int fd = ::open(host.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0) {
			throw IOException("Cannot open file \"%s\": %s", path, std::strerror(errno));
		}
		struct stat opened;
		if (::fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode)) {
			::close(fd);
			throw IOException("Cannot read \"%s\": it is not a regular file", path);
		}
		if (check && IsDatabaseFile(opened)) {
			// Closing this descriptor would also drop the worker's lock on the database.
			::close(fd);
			throw PermissionException("Cannot read \"%s\": it is the database file (or its WAL) under another "
			                          "name, a hard link; the database is read through its tables",
			                          path);
		}
		return make_uniq<duckgate_files::DescriptorFileHandle>(*this, path, flags, fd);
	}

	bool FileExists(const string &filename, optional_ptr<FileOpener> opener) override {
		struct stat status;
		return !FileHidden(filename) && ::stat(Resolve(filename).Host().c_str(), &status) == 0 &&
		       S_ISREG(status.st_mode);
	}

	bool DirectoryExists(const string &directory, optional_ptr<FileOpener> opener) override {
		struct stat status;
		return ::stat(Resolve(directory).Host().c_str(), &status) == 0 && S_ISDIR(status.st_mode);
	}

	bool ListFiles(const string &directory, const std::function<void(const string &, bool)> &callback,
	               FileOpener *opener) override {
		return local->ListFiles(Resolve(directory).Host(), callback, nullptr);
	}

	bool SupportsGlobExtended() const override {
		return true;
	}

	//! DuckDB's own glob, on the host, so that patterns match exactly as DuckDB matches them; each
	//! match is named back under the folder's name. Stops past the caps, before a reader opens
	//! any of the files (a CSV or JSON reader reads a sample of its first file while it binds).
	unique_ptr<MultiFileList> GlobFilesExtended(const string &path, const FileGlobInput &input,
	                                            optional_ptr<FileOpener> opener) override {
		auto named = Resolve(path);
		auto host_prefix = named.folder->dir + "/";
		auto max_listed = max_files > NumericLimits<idx_t>::Maximum() / LISTED_PER_FILE
		                      ? NumericLimits<idx_t>::Maximum()
		                      : max_files * LISTED_PER_FILE;
		CountingLocalFileSystem counting(path, max_listed);
		auto found = counting.Glob(named.Host(), FileGlobOptions::ALLOW_EMPTY, nullptr);
		vector<OpenFileInfo> files;
		idx_t bytes = 0;
		MultiFileListScanData scan;
		found->InitializeScan(scan);
		OpenFileInfo file;
		while (found->Scan(scan, file)) {
			if (files.size() >= max_files) {
				throw InvalidInputException("The pattern \"%s\" matches more than %llu files, the cap on one pattern "
				                  "(--files-max-count): name fewer files, e.g. one subfolder or a narrower pattern",
				                  path, static_cast<unsigned long long>(max_files));
			}
			string relative;
			if (file.path == named.folder->dir) {
				relative = "";
			} else if (StringUtil::StartsWith(file.path, host_prefix)) {
				relative = file.path.substr(host_prefix.size());
			} else {
				throw IOException("The pattern \"%s\" matched a file outside its folder", path);
			}
			OpenFileInfo named_file(relative.empty() ? named.folder->name : named.folder->name + "/" + relative);
			if (FileHidden(named_file.path)) {
				continue;
			}
			struct stat status;
			if (::stat(file.path.c_str(), &status) == 0 && S_ISREG(status.st_mode)) {
				bytes += UnsafeNumericCast<idx_t>(status.st_size);
				if (bytes > max_bytes) {
					throw InvalidInputException("The files \"%s\" matches hold more than %llu bytes together, the cap on one "
					                  "query (--files-max-bytes): name fewer or smaller files",
					                  path, static_cast<unsigned long long>(max_bytes));
				}
			}
			files.push_back(std::move(named_file));
		}
		return make_uniq<SimpleMultiFileList>(std::move(files));
	}

private:
	//! The folder `path` begins with (`NAME/`), if any.
	const DeclaredFolder *Find(const string &path) const {
		for (auto &folder : folders) {
			if (path.size() > folder.name.size() && path.compare(0, folder.name.size(), folder.name) == 0 &&
			    path[folder.name.size()] == '/') {
				return &folder;
			}
		}
		return nullptr;
	}

	//! `path` as a folder and a relative part; with the check, refused when it has a `..` component
	//! or resolves (links followed) outside the folder.
	FolderPath Resolve(const string &path) const {
		auto folder = Find(path);
		if (!folder) {
			throw IOException("\"%s\" is not in a declared folder", path);
		}
		FolderPath named {folder, path.substr(folder->name.size() + 1)};
		if (!check) {
			return named;
		}
		for (auto &component : StringUtil::Split(named.relative, '/')) {
			if (component == "..") {
				throw PermissionException("Cannot read \"%s\": \"..\" may not appear in a path in a declared folder",
				                          path);
			}
		}
		if (FileSystem::HasGlob(named.relative)) {
			return named;
		}
		char resolved[PATH_MAX];
		if (::realpath(named.Host().c_str(), resolved)) {
			string real(resolved);
			if (real != folder->dir && !StringUtil::StartsWith(real, folder->dir + "/")) {
				throw PermissionException(
				    "Cannot read \"%s\": it is a symbolic link that leads out of the folder \"%s\"", path,
				    folder->name);
			}
		}
		return named;
	}

	//! Whether `opened` is the database file or its WAL: the same inode, whatever its name. Asked
	//! of the kernel at each open, since a WAL comes and goes.
	bool IsDatabaseFile(const struct stat &opened) const {
		for (auto &file : database_files) {
			struct stat status;
			if (::stat(file.c_str(), &status) == 0 && status.st_dev == opened.st_dev &&
			    status.st_ino == opened.st_ino) {
				return true;
			}
		}
		return false;
	}

	vector<DeclaredFolder> folders;
	//! The database file and its WAL, which no folder serves by any name.
	vector<string> database_files;
	bool check;
	idx_t max_files;
	//! The most bytes the files one pattern matches may hold together.
	idx_t max_bytes;
	unique_ptr<FileSystem> local;
};

//! The refusal of a reader's option, or of a reader that binds by position, on files a column rule
//! names. It depends only on the rules and the files' names, never on what the files hold.
[[noreturn]] void RefuseUnderColumnRules(const string &what) {
	throw PermissionException("The query reads data that is not available on this server: %s cannot be used on "
	                          "files whose columns the operator hides. Name the columns you need, and leave out "
	                          "reader options.",
	                          what);
}

//! The multi-file reader of the declared folders' readers under privacy rules. A Parquet file's
//! columns are bound by their names, from the file's own schema: a column a rule hides is taken out
//! of that schema before DuckDB's binder sees it, so it does not exist for the query, exactly like
//! a column the file does not have (`SELECT *`, `DESCRIBE`, `COLUMNS(…)`, an error's candidates).
//! A reader that may bind columns by position or read a header as a row (CSV, JSON) cannot hide a
//! column, so it is refused on any file a column rule names, whatever the file holds. So are
//! options that choose which file column a result column is (`schema`, `bound_schema`, …), as
//! duckgate's classification of every option answers (`OptionRefused`). The Parquet metadata functions
//! take no multi-file reader of a function's own: the plan check refuses them on such files.
class PrivateColumnsReader : public MultiFileReader {
public:
	explicit PrivateColumnsReader(bool binds_by_name_p) : binds_by_name(binds_by_name_p) {
	}

	using MultiFileReader::CreateFileList;

	shared_ptr<MultiFileList> CreateFileList(ClientContext &context, const vector<string> &paths,
	                                         const FileGlobInput &glob_input) override {
		return Remember(MultiFileReader::CreateFileList(context, paths, glob_input));
	}

	shared_ptr<MultiFileList> CreateFileList(ClientContext &context, vector<OpenFileInfo> files,
	                                         const FileGlobInput &glob_input) override {
		return Remember(MultiFileReader::CreateFileList(context, std::move(files), glob_input));
	}

	bool ParseOption(const Identifier &key, const Value &val, MultiFileOptions &options,
	                 ClientContext &context) override {
		if (under_column_rules && OptionRefused(key.GetIdentifierName())) {
			RefuseUnderColumnRules("the option " + key.GetIdentifierName());
		}
		return MultiFileReader::ParseOption(key, val, options, context);
	}

	void BindOptions(MultiFileOptions &options, MultiFileList &files, vector<LogicalType> &return_types,
	                 vector<Identifier> &names, MultiFileReaderBindData &bind_data) override {
		if (under_column_rules) {
			// Before DuckDB adds its own columns (filename, hive partitions, file_row_number), whose
			// clashes with the file's columns it reports: a hidden column clashes with none.
			auto all = files.GetAllFiles();
			vector<LogicalType> kept_types;
			vector<Identifier> kept_names;
			for (idx_t i = 0; i < names.size(); i++) {
				bool hidden = false;
				for (auto &file : all) {
					if (ColumnHidden(file.path, names[i].GetIdentifierName())) {
						hidden = true;
						break;
					}
				}
				if (!hidden) {
					kept_names.push_back(names[i]);
					kept_types.push_back(return_types[i]);
				}
			}
			names = std::move(kept_names);
			return_types = std::move(kept_types);
		}
		MultiFileReader::BindOptions(options, files, return_types, names, bind_data);
	}

	unique_ptr<MultiFileReader> Copy() const override {
		auto copy = make_uniq<PrivateColumnsReader>(binds_by_name);
		copy->function_name = function_name;
		copy->under_column_rules = under_column_rules;
		return std::move(copy);
	}

private:
	shared_ptr<MultiFileList> Remember(shared_ptr<MultiFileList> list) {
		for (auto &file : list->GetAllFiles()) {
			if (FileHasColumnRules(file.path)) {
				under_column_rules = true;
			}
		}
		if (under_column_rules && !binds_by_name) {
			auto name = function_name.GetIdentifierName();
			RefuseUnderColumnRules(name.empty() ? string("this reader") : "the reader " + name);
		}
		return list;
	}

	//! The reader binds a file's columns by the names its schema holds (Parquet).
	bool binds_by_name;
	//! A column rule names one of the files.
	bool under_column_rules = false;
};

unique_ptr<MultiFileReader> CreatePrivateColumnsReader(const BoundTableFunction &) {
	return make_uniq<PrivateColumnsReader>(true);
}

unique_ptr<MultiFileReader> CreatePositionalReader(const BoundTableFunction &) {
	return make_uniq<PrivateColumnsReader>(false);
}

//! Give the declared folders' readers the reader above, in the system catalog, before any query:
//! the Parquet readers hide columns, the CSV and JSON readers refuse files a column rule names.
void InstallPrivateReaders(DatabaseInstance &instance) {
	auto &catalog = Catalog::GetSystemCatalog(instance);
	auto transaction = CatalogTransaction::GetSystemTransaction(instance);
	auto &schema = catalog.GetSchema(transaction, Identifier::DefaultSchema());
	struct Reader {
		const char *name;
		table_function_get_multi_file_reader_t create;
	};
	static const Reader readers[] = {
	    {"read_parquet", CreatePrivateColumnsReader}, {"parquet_scan", CreatePrivateColumnsReader},
	    {"read_csv", CreatePositionalReader},         {"read_csv_auto", CreatePositionalReader},
	    {"read_json", CreatePositionalReader},        {"read_json_auto", CreatePositionalReader},
	    {"read_ndjson", CreatePositionalReader},      {"read_ndjson_auto", CreatePositionalReader},
	    {"read_json_objects", CreatePositionalReader}, {"read_json_objects_auto", CreatePositionalReader},
	    {"read_ndjson_objects", CreatePositionalReader}};
	for (auto &reader : readers) {
		auto entry = schema.GetEntry(transaction, CatalogType::TABLE_FUNCTION_ENTRY, Identifier(reader.name));
		if (!entry) {
			// A function this DuckDB does not have cannot be called either.
			continue;
		}
		entry->Cast<TableFunctionCatalogEntry>().functions.ApplyToFunctions(
		    [&](TableFunction &function) { function.get_multi_file_reader = reader.create; });
	}
}

char *CopyMessage(const string &text) {
	auto copy = static_cast<char *>(duckdb_malloc(text.size() + 1));
	std::memcpy(copy, text.c_str(), text.size() + 1);
	return copy;
}

} // namespace
} // namespace duckdb

extern "C" int32_t duckgate_folders_mount(duckdb_database database, const duckgate_text *names,
                                          const duckgate_text *dirs, size_t count,
                                          const duckgate_text *database_files, size_t database_file_count,
                                          uint32_t check, uint64_t max_files, uint64_t max_bytes,
                                          duckgate_folder_privacy_t privacy,
                                          uint64_t database_token, char **error) {
	using namespace duckdb;
	try {
		if (!database || (count > 0 && (!names || !dirs)) || (database_file_count > 0 && !database_files)) {
			throw InvalidInputException("duckgate_folders_mount: no database or no folders");
		}
		vector<string> protected_files;
		for (size_t i = 0; i < database_file_count; i++) {
			protected_files.emplace_back(database_files[i].data, database_files[i].size);
		}
		vector<DeclaredFolder> folders;
		for (size_t i = 0; i < count; i++) {
			DeclaredFolder folder;
			folder.name = string(names[i].data, names[i].size);
			folder.dir = string(dirs[i].data, dirs[i].size);
			if (folder.name.empty() || folder.dir.empty() || folder.dir[0] != '/') {
				throw InvalidInputException("duckgate_folders_mount: a folder needs a name and an absolute directory");
			}
			folders.push_back(std::move(folder));
		}
		auto wrapper = reinterpret_cast<DatabaseWrapper *>(database);
		auto &instance = *wrapper->database->instance;
		privacy_callback = privacy;
		privacy_token = database_token;
		InstallPrivateReaders(instance);
		auto &fs = FileSystem::GetFileSystem(instance);
		fs.RegisterSubSystem(make_uniq<DeclaredFoldersFileSystem>(std::move(folders), std::move(protected_files),
		                                                      check != 0, max_files, max_bytes));
		return 0;
	} catch (std::exception &ex) {
		if (error) {
			*error = CopyMessage(ErrorData(ex).Message());
		}
		return -1;
	}
}
