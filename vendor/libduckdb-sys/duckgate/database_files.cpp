// duckgate's declared databases, read through descriptors (see plan_reader.h for the contract).
//
// Why a file system of its own. A worker must read each database and its WAL to attach them, and
// landlock grants by path: a grant on the database's path lets every open of that path through,
// whatever asked for it, so with every check of the SQL and DuckDB's hardening off, SQL could read
// the raw bytes (hidden tables and columns included) by the path, by `..` out of a declared folder
// or through a symbolic link placed in one. So the worker opens each database file and its WAL
// read-only before it confines itself (or its template does, before it forks it), landlock grants
// no path of them, and DuckDB reaches them only here: under names of their own
// (`duckgate-database://N`, and `duckgate-database://N.wal`, the WAL's name DuckDB derives by
// appending `.wal`), each served from its held descriptor, read-only, with `pread`.
//
// Only duckgate's own ATTACH may open these names: opens are served only while duckgate says it is
// attaching (`duckgate_database_files_attaching`), when no statement of the agent's runs on this
// database. Once attached, DuckDB reads through the handles it opened then, which stay valid.
//
// Each open gets a descriptor of its own (a duplicate of the held one), closed when DuckDB closes
// the handle, and takes the lock DuckDB asks for on it: POSIX locks belong to the process and the
// file, so this is exactly what DuckDB's local file system does with a descriptor it opened by
// path, and closing any descriptor of the file drops them, as there. `duckgate_database_files_unlock`
// releases them without a path, where duckgate used to open the file and close it again.

#include "plan_reader.h"
#include "descriptor_files.h"

#include "duckdb.hpp"
#include "duckdb/common/file_system.hpp"
#include "duckdb/common/string_util.hpp"
#include "duckdb/common/virtual_file_system.hpp"
#include "duckdb/main/capi/capi_internal.hpp"

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace duckdb {
namespace {

constexpr const char *HELD_PREFIX = "duckgate-database://";

struct HeldFile {
	//! The name ATTACH opens.
	string name;
	//! The descriptor the process holds for its life; never closed here.
	int fd;
};

//! One database instance's held files, and whether duckgate's ATTACH is running on it. A worker
//! process has one instance; a test process may have many, each with its own.
struct HeldSet {
	vector<HeldFile> files;
	std::atomic<bool> attaching {false};

	//! The held file ATTACH names by `path`, as the path stands now: a WAL removed since it was
	//! held (no name left: a writer checkpointed it into the database file, or moved a newer one
	//! over it) is absent, as opening its path would find it. Its descriptor still reads the old
	//! entries, which replayed over the checkpointed file would be applied twice. The database's
	//! read lock, taken before the WAL is looked for, keeps a writer from checkpointing meanwhile.
	const HeldFile *Find(const string &path) const {
		for (auto &file : files) {
			if (file.name != path) {
				continue;
			}
			struct stat status;
			if (StringUtil::EndsWith(path, ".wal") && ::fstat(file.fd, &status) == 0 && status.st_nlink == 0) {
				return nullptr;
			}
			return &file;
		}
		return nullptr;
	}
};

std::mutex held_sets_lock;
//! Each instance's set, by the instance's address (instances live as long as the process).
std::unordered_map<const DatabaseInstance *, shared_ptr<HeldSet>> held_sets;

shared_ptr<HeldSet> HeldSetOf(duckdb_database database) {
	if (!database) {
		return nullptr;
	}
	auto wrapper = reinterpret_cast<DatabaseWrapper *>(database);
	std::lock_guard<std::mutex> guard(held_sets_lock);
	auto found = held_sets.find(wrapper->database->instance.get());
	return found == held_sets.end() ? nullptr : found->second;
}

//! Take the lock DuckDB asked for, as its local file system does (`TryAcquireFileLock`), on `fd`.
//! Throws (closing `fd`) when another process holds a conflicting one: an I/O error carrying the
//! errno, which duckgate reads as "locked by a writer".
void TakeLock(int fd, const string &path, FileOpenFlags flags) {
	if (flags.Lock() == FileLockType::NO_LOCK) {
		return;
	}
	struct flock lock;
	std::memset(&lock, 0, sizeof lock);
	lock.l_type = F_RDLCK;
	lock.l_whence = SEEK_SET;
	lock.l_start = 0;
	lock.l_len = 0;
	if (::fcntl(fd, F_SETLK, &lock) == 0) {
		return;
	}
	auto error = errno;
	if (error == ENOTSUP) {
		// As DuckDB's own: a file system without locks is read without one.
		return;
	}
	::close(fd);
	throw IOException({{"errno", std::to_string(error)}},
	                  "Could not set lock on file \"%s\": another process holds a conflicting lock", path);
}

class HeldDatabasesFileSystem : public duckgate_files::DescriptorFileSystem {
public:
	explicit HeldDatabasesFileSystem(shared_ptr<HeldSet> held_p) : held(std::move(held_p)) {
	}

	string GetName() const override {
		return "DuckgateHeldDatabases";
	}

	bool CanHandleFile(const string &path) override {
		return StringUtil::StartsWith(path, HELD_PREFIX);
	}

	unique_ptr<FileHandle> OpenFile(const string &path, FileOpenFlags flags, optional_ptr<FileOpener> opener) override {
		if (flags.OpenForWriting() || flags.Lock() == FileLockType::WRITE_LOCK) {
			throw PermissionException("Cannot write \"%s\": the databases are read-only", path);
		}
		if (!held->attaching.load()) {
			throw PermissionException("Cannot open \"%s\": a database is read only through its tables", path);
		}
		auto file = held->Find(path);
		if (!file) {
			// A name of the prefix that is not held: the WAL of a database that had none when the
			// worker opened its files (DuckDB probes it, `NULL_IF_NOT_EXISTS`), or a file the worker
			// cannot serve (the checkpoint WAL a writer leaves when it stops mid-checkpoint, which
			// landlock denied before too): never a file of the host's.
			if (flags.ReturnNullIfNotExists() && StringUtil::EndsWith(path, ".wal")) {
				return nullptr;
			}
			throw IOException({{"errno", std::to_string(ENOENT)}}, "Cannot open file \"%s\": %s", path,
			                  std::strerror(ENOENT));
		}
		int fd = ::fcntl(file->fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0) {
			throw IOException("Cannot open file \"%s\": %s", path, std::strerror(errno));
		}
		TakeLock(fd, path, flags);
		return make_uniq<duckgate_files::DescriptorFileHandle>(*this, path, flags, fd);
	}

	bool FileExists(const string &filename, optional_ptr<FileOpener> opener) override {
		return held->attaching.load() && held->Find(filename) != nullptr;
	}

	bool DirectoryExists(const string &directory, optional_ptr<FileOpener> opener) override {
		return false;
	}

	bool ListFiles(const string &directory, const std::function<void(const string &, bool)> &callback,
	               FileOpener *opener) override {
		return false;
	}

	vector<OpenFileInfo> Glob(const string &path, FileOpener *opener) override {
		// ATTACH opens its names directly; only a file reader expands a pattern, and no reader
		// may read a database's bytes: a clear refusal rather than an empty list.
		throw PermissionException("Cannot read \"%s\": a database is read only through its tables", path);
	}

private:
	shared_ptr<HeldSet> held;

};

char *CopyHeldMessage(const string &text) {
	auto copy = static_cast<char *>(duckdb_malloc(text.size() + 1));
	std::memcpy(copy, text.c_str(), text.size() + 1);
	return copy;
}

} // namespace
} // namespace duckdb

extern "C" int32_t duckgate_database_files_mount(duckdb_database database, const duckgate_text *names,
                                                 const int32_t *fds, size_t count, char **error) {
	using namespace duckdb;
	try {
		if (!database || (count > 0 && (!names || !fds))) {
			throw InvalidInputException("duckgate_database_files_mount: no database or no files");
		}
		auto set = make_shared_ptr<HeldSet>();
		for (size_t i = 0; i < count; i++) {
			HeldFile file;
			file.name = string(names[i].data, names[i].size);
			file.fd = fds[i];
			if (!StringUtil::StartsWith(file.name, HELD_PREFIX) || file.fd < 0) {
				throw InvalidInputException("duckgate_database_files_mount: a held file needs its name and descriptor");
			}
			set->files.push_back(std::move(file));
		}
		auto wrapper = reinterpret_cast<DatabaseWrapper *>(database);
		auto &instance = *wrapper->database->instance;
		{
			std::lock_guard<std::mutex> guard(held_sets_lock);
			if (!held_sets.emplace(&instance, set).second) {
				throw InvalidInputException("duckgate_database_files_mount: this database's files are mounted already");
			}
		}
		FileSystem::GetFileSystem(instance).RegisterSubSystem(make_uniq<HeldDatabasesFileSystem>(set));
		return 0;
	} catch (std::exception &ex) {
		if (error) {
			*error = CopyHeldMessage(ErrorData(ex).Message());
		}
		return -1;
	}
}

extern "C" int32_t duckgate_database_files_attaching(duckdb_database database, uint32_t on) {
	auto set = duckdb::HeldSetOf(database);
	if (!set) {
		return -1;
	}
	set->attaching.store(on != 0);
	return 0;
}

extern "C" int32_t duckgate_database_files_unlock(duckdb_database database) {
	auto set = duckdb::HeldSetOf(database);
	if (!set) {
		return EINVAL;
	}
	int32_t first_error = 0;
	for (auto &file : set->files) {
		struct flock lock;
		std::memset(&lock, 0, sizeof lock);
		lock.l_type = F_UNLCK;
		lock.l_whence = SEEK_SET;
		lock.l_start = 0;
		lock.l_len = 0;
		if (::fcntl(file.fd, F_SETLK, &lock) != 0 && first_error == 0) {
			first_error = errno;
		}
	}
	return first_error;
}
