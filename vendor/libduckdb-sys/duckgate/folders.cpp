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
// path that resolves (symbolic links followed) outside its folder, and any open for writing.
// Always: anything but a regular file (a FIFO would block the reader, a device node has side
// effects), checked before the open and again on the open descriptor; and a glob matching more
// than the operator's cap of files, which stops the expansion there.

#include "plan_reader.h"

#include "duckdb.hpp"
#include "duckdb/common/file_system.hpp"
#include "duckdb/common/local_file_system.hpp"
#include "duckdb/common/multi_file/multi_file_list.hpp"
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

class FolderFileHandle : public FileHandle {
public:
	FolderFileHandle(FileSystem &fs, const string &path, FileOpenFlags flags, int fd_p)
	    : FileHandle(fs, path, flags), fd(fd_p) {
	}
	~FolderFileHandle() override {
		FolderFileHandle::Close();
	}
	void Close() override {
		if (fd >= 0) {
			::close(fd);
			fd = -1;
		}
	}

	int fd;
	idx_t position = 0;
};

class DeclaredFoldersFileSystem : public FileSystem {
public:
	DeclaredFoldersFileSystem(vector<DeclaredFolder> folders_p, bool check_p, idx_t max_files_p)
	    : folders(std::move(folders_p)), check(check_p), max_files(max_files_p), local(FileSystem::CreateLocal()) {
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
		if (::stat(host.c_str(), &before) != 0) {
			if (errno == ENOENT && flags.ReturnNullIfNotExists()) {
				return nullptr;
			}
			throw IOException("Cannot open file \"%s\": %s", path, std::strerror(errno));
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
		return make_uniq<FolderFileHandle>(*this, path, flags, fd);
	}

	void Read(FileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) override {
		auto &file = handle.Cast<FolderFileHandle>();
		auto out = static_cast<char *>(buffer);
		int64_t done = 0;
		while (done < nr_bytes) {
			auto got = ::pread(file.fd, out + done, UnsafeNumericCast<size_t>(nr_bytes - done),
			                   UnsafeNumericCast<off_t>(location + UnsafeNumericCast<idx_t>(done)));
			if (got < 0) {
				if (errno == EINTR) {
					continue;
				}
				throw IOException("Could not read from file \"%s\": %s", file.path, std::strerror(errno));
			}
			if (got == 0) {
				throw IOException(
				    "Could not read enough bytes from file \"%s\": attempted to read %llu bytes from location %llu",
				    file.path, static_cast<unsigned long long>(nr_bytes), static_cast<unsigned long long>(location));
			}
			done += got;
		}
	}

	int64_t Read(FileHandle &handle, void *buffer, int64_t nr_bytes) override {
		auto &file = handle.Cast<FolderFileHandle>();
		while (true) {
			auto got = ::pread(file.fd, buffer, UnsafeNumericCast<size_t>(nr_bytes),
			                   UnsafeNumericCast<off_t>(file.position));
			if (got < 0) {
				if (errno == EINTR) {
					continue;
				}
				throw IOException("Could not read from file \"%s\": %s", file.path, std::strerror(errno));
			}
			file.position += UnsafeNumericCast<idx_t>(got);
			return got;
		}
	}

	int64_t GetFileSize(FileHandle &handle) override {
		return Stat(handle).st_size;
	}

	timestamp_t GetLastModifiedTime(FileHandle &handle) override {
		return Timestamp::FromEpochSeconds(Stat(handle).st_mtime);
	}

	FileType GetFileType(FileHandle &handle) override {
		return FileType::FILE_TYPE_REGULAR;
	}

	void Seek(FileHandle &handle, idx_t location) override {
		handle.Cast<FolderFileHandle>().position = location;
	}

	idx_t SeekPosition(FileHandle &handle) override {
		return handle.Cast<FolderFileHandle>().position;
	}

	bool CanSeek() override {
		return true;
	}

	bool OnDiskFile(FileHandle &handle) override {
		return true;
	}

	bool IsPipe(const string &filename, optional_ptr<FileOpener> opener) override {
		return false;
	}

	bool FileExists(const string &filename, optional_ptr<FileOpener> opener) override {
		struct stat status;
		return ::stat(Resolve(filename).Host().c_str(), &status) == 0 && S_ISREG(status.st_mode);
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
	//! match is named back under the folder's name. Stops past the cap.
	unique_ptr<MultiFileList> GlobFilesExtended(const string &path, const FileGlobInput &input,
	                                            optional_ptr<FileOpener> opener) override {
		auto named = Resolve(path);
		auto host_prefix = named.folder->dir + "/";
		auto found = local->Glob(named.Host(), FileGlobOptions::ALLOW_EMPTY, nullptr);
		vector<OpenFileInfo> files;
		MultiFileListScanData scan;
		found->InitializeScan(scan);
		OpenFileInfo file;
		while (found->Scan(scan, file)) {
			if (files.size() >= max_files) {
				throw IOException("The pattern \"%s\" matches more than %llu files, the cap on one pattern "
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

	struct stat Stat(FileHandle &handle) {
		auto &file = handle.Cast<FolderFileHandle>();
		struct stat status;
		if (::fstat(file.fd, &status) != 0) {
			throw IOException("Could not read the size of \"%s\": %s", file.path, std::strerror(errno));
		}
		return status;
	}

	vector<DeclaredFolder> folders;
	bool check;
	idx_t max_files;
	unique_ptr<FileSystem> local;
};

char *CopyMessage(const string &text) {
	auto copy = static_cast<char *>(duckdb_malloc(text.size() + 1));
	std::memcpy(copy, text.c_str(), text.size() + 1);
	return copy;
}

} // namespace
} // namespace duckdb

extern "C" int32_t duckgate_folders_mount(duckdb_database database, const duckgate_text *names,
                                          const duckgate_text *dirs, size_t count, uint32_t check,
                                          uint64_t max_files, char **error) {
	using namespace duckdb;
	try {
		if (!database || (count > 0 && (!names || !dirs))) {
			throw InvalidInputException("duckgate_folders_mount: no database or no folders");
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
		auto &fs = FileSystem::GetFileSystem(instance);
		fs.RegisterSubSystem(make_uniq<DeclaredFoldersFileSystem>(std::move(folders), check != 0, max_files));
		return 0;
	} catch (std::exception &ex) {
		if (error) {
			*error = CopyMessage(ErrorData(ex).Message());
		}
		return -1;
	}
}
