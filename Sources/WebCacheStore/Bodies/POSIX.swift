import CFileSpace

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Thin, throwing wrappers over the POSIX calls the body files need.
enum POSIX {
    static func errorText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }

    static func openForReading(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError(.ioFailure, "cannot open \(path): \(errorText())") }
        return fd
    }

    /// Opens the body file at `path` for reading and takes a shared lock on it, which keeps it
    /// from being recycled (``SpareBodyFiles``) while the descriptor is open. Throws when the
    /// file is gone, is being recycled, or was recycled between the `open` and the lock (the
    /// path no longer names the file opened). On a file system without `flock` the file is read
    /// unlocked: recycling cannot lock it either, so it is never recycled. Returns the descriptor
    /// with the file's size, from the `fstat` the check makes.
    static func openBodyForReading(_ path: String) throws -> (descriptor: Int32, size: Int) {
        let fd = try openForReading(path)
        let locked = flock(fd, LOCK_SH | LOCK_NB) == 0 || errno != EWOULDBLOCK
        var opened = stat()
        var named = stat()
        guard locked, fstat(fd, &opened) == 0, stat(path, &named) == 0,
            opened.st_dev == named.st_dev, opened.st_ino == named.st_ino
        else {
            closeFile(fd)
            throw StoreError(.ioFailure, "cannot open \(path): the entry's body was removed meanwhile")
        }
        return (fd, Int(opened.st_size))
    }

    /// Creates the file at `path`, which must not exist, open for reading and writing. When its
    /// directory is missing (`ENOENT`), `makeDirectories` is called and the creation tried once
    /// more: the directories are made only the first time, not checked on every file.
    static func createExclusive(_ path: String, makeDirectories: () throws -> Void) throws -> Int32 {
        var fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if fd < 0 && errno == ENOENT {
            try makeDirectories()
            fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw StoreError(.ioFailure, "cannot create \(path): \(errorText())") }
        return fd
    }

    /// A second descriptor for the file `fd` has open (closed on `exec`, as every descriptor here).
    static func duplicate(_ fd: Int32) throws -> Int32 {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw StoreError(.ioFailure, "cannot duplicate a file descriptor: \(errorText())") }
        return copy
    }

    static func size(of fd: Int32) throws -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StoreError(.ioFailure, "cannot stat a body file: \(errorText())") }
        return Int(info.st_size)
    }

    /// Whether the open file `fd` still has a name (it was not unlinked since it was opened) and
    /// is `size` bytes long.
    static func isLinked(_ fd: Int32, size: Int) -> Bool {
        var info = stat()
        return fstat(fd, &info) == 0 && info.st_nlink > 0 && Int(info.st_size) == size
    }

    /// Reads up to `count` bytes into `buffer`; returns how many were read (0 at the end).
    static func readChunk(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let result = read(fd, buffer.baseAddress, buffer.count)
            if result >= 0 { return result }
            if errno == EINTR { continue }
            throw StoreError(.ioFailure, "cannot read a body file: \(errorText())")
        }
    }

    /// Reads `count` bytes at `offset` (fewer only at the end of the file).
    static func readAt(_ fd: Int32, offset: Int, count: Int) throws -> Data {
        var data = Data(count: count)
        var filled = 0
        try data.withUnsafeMutableBytes { buffer in
            while filled < count {
                let read = pread(fd, buffer.baseAddress! + filled, count - filled, off_t(offset + filled))
                if read < 0 {
                    if errno == EINTR { continue }
                    throw StoreError(.ioFailure, "cannot read a body file: \(errorText())")
                }
                if read == 0 { break }
                filled += read
            }
        }
        return data.prefix(filled)
    }

    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < buffer.count {
            let result = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if result < 0 {
                if errno == EINTR { continue }
                throw StoreError(.ioFailure, "cannot write \(path): \(errorText())")
            }
            offset += result
        }
    }

    /// Gives `fd` its blocks for its first `bytes` bytes at once, keeping its size (see
    /// ``BodyWriter/expect(size:)``). `true` when it did; `false` when the file system or the
    /// platform cannot, which changes nothing but the speed. Throws when the disk has no room
    /// for them (or the file could not be that large).
    static func reserve(_ fd: Int32, bytes: Int, path: String) throws -> Bool {
        while webcache_file_reserve(fd, Int64(bytes)) != 0 {
            switch errno {
            case EINTR: continue
            case ENOSPC, EDQUOT, EFBIG:
                throw StoreError(.ioFailure, "no room for a body of \(bytes) bytes in \(path): \(errorText())")
            default: return false
            }
        }
        return true
    }

    static func closeFile(_ fd: Int32) {
        _ = close(fd)
    }

    static func moveFile(_ from: String, _ to: String) throws {
        guard rename(from, to) == 0 else {
            throw StoreError(.ioFailure, "cannot move \(from) into place: \(errorText())")
        }
    }

    /// Removes a file; a file that is already gone is not an error.
    static func unlinkIfPresent(_ path: String) {
        _ = unlink(path)
    }

    static func makeDirectory(_ path: String) throws {
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw StoreError(.ioFailure, "cannot create directory \(path): \(errorText())")
        }
    }

    /// The names in a directory, without `.` and `..`; empty when it does not exist.
    static func list(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Takes an advisory lock on `fd`; `exclusive` and `wait` choose the kind.
    static func lock(_ fd: Int32, exclusive: Bool, wait: Bool) -> Bool {
        flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB)) == 0
    }
}
