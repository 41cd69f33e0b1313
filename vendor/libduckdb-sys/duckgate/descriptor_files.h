// A read-only file DuckDB reads through a descriptor duckgate opened itself: the handle and the
// reads shared by duckgate's two file systems (`folders.cpp`, whose descriptors are opened per
// file after the checks, and `database_files.cpp`, whose are duplicates of the ones held since
// before confinement). Reads are `pread` at an offset the handle keeps, never `lseek` (the
// worker's seccomp filter does not allow it), and a short read of a range DuckDB asked for in
// full is an error, as in DuckDB's local file system.

#pragma once

#include "duckdb.hpp"
#include "duckdb/common/file_system.hpp"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace duckdb {
namespace duckgate_files {

class DescriptorFileHandle : public FileHandle {
public:
	DescriptorFileHandle(FileSystem &fs, const string &path, FileOpenFlags flags, int fd_p)
	    : FileHandle(fs, path, flags), fd(fd_p) {
	}
	~DescriptorFileHandle() override {
		DescriptorFileHandle::Close();
	}
	void Close() override {
		if (fd >= 0) {
			::close(fd);
			fd = -1;
		}
	}

	//! Owned by the handle: closed with it.
	int fd;
	idx_t position = 0;
};

//! The reading half of a file system whose handles are `DescriptorFileHandle`s of regular files.
class DescriptorFileSystem : public FileSystem {
public:
	void Read(FileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) override {
		auto &file = handle.Cast<DescriptorFileHandle>();
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
		auto &file = handle.Cast<DescriptorFileHandle>();
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
		handle.Cast<DescriptorFileHandle>().position = location;
	}

	idx_t SeekPosition(FileHandle &handle) override {
		return handle.Cast<DescriptorFileHandle>().position;
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

protected:
	static struct stat Stat(FileHandle &handle) {
		auto &file = handle.Cast<DescriptorFileHandle>();
		struct stat status;
		if (::fstat(file.fd, &status) != 0) {
			throw IOException("Could not read the size of \"%s\": %s", file.path, std::strerror(errno));
		}
		return status;
	}
};

} // namespace duckgate_files
} // namespace duckdb
