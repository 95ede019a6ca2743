import HTTPCaching

/// A verified body file held open for sending (`sendfile` at explicit offsets, so any number of
/// answers may use it at once). It is closed when its last holder lets go: the store's table of
/// open files, or an answer still being written.
package final class OpenBodyFile: Sendable {
    /// The open, read-only descriptor; do not close it.
    package let descriptor: Int32
    /// The body's length in bytes.
    package let size: Int
    /// The file's name under the store's bodies.
    let name: String

    init(descriptor: Int32, size: Int, name: String) {
        self.descriptor = descriptor
        self.size = size
        self.name = name
    }

    deinit {
        POSIX.closeFile(descriptor)
    }
}

/// The body files the store keeps open, by entry: sending a hot body again costs one `fstat`
/// instead of `open`, `fstat` and `close` (a path walk in the kernel). At most ``capacity`` are
/// held; a new file that finds the table full empties it first. A removed entry's file is let go
/// at once, so that its disk space is freed when the last answer using it is written; a file
/// unlinked by another process is noticed by the `fstat` before each use and opened again.
final class OpenBodyFiles: Sendable {
    /// The most files held open.
    static let capacity = 128

    private let files = Locked([Int64: OpenBodyFile]())

    /// The open file of `entry` when it is held, still linked and still `size` bytes long.
    func file(of entry: Int64, name: String, size: Int) -> OpenBodyFile? {
        guard let file = files.withLock({ $0[entry] }) else { return nil }
        guard file.name == name, file.size == size, POSIX.isLinked(file.descriptor, size: size) else {
            forget([entry])
            return nil
        }
        return file
    }

    /// Holds `file` open for `entry`.
    func keep(_ file: OpenBodyFile, for entry: Int64) {
        // The files let go come out of the lock and are closed there, by their last holder.
        _ = files.withLock { files -> [Int64: OpenBodyFile] in
            var dropped: [Int64: OpenBodyFile] = [:]
            if files[entry] == nil, files.count >= Self.capacity { swap(&dropped, &files) }
            files[entry] = file
            return dropped
        }
    }

    /// Lets go of the files of `entries`.
    func forget(_ entries: some Sequence<Int64>) {
        _ = files.withLock { files in entries.compactMap { files.removeValue(forKey: $0) } }
    }

    /// Lets go of every file.
    func forgetAll() {
        _ = files.withLock { files -> [Int64: OpenBodyFile] in
            var dropped: [Int64: OpenBodyFile] = [:]
            swap(&dropped, &files)
            return dropped
        }
    }
}
