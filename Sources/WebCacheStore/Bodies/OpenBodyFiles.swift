import Dispatch
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

/// The body files the store keeps open, by entry: sending a hot body again costs at most one
/// `fstat` instead of `open`, `fstat` and `close` (a path walk in the kernel). At most
/// ``capacity`` are held; a new file that finds the table full empties it first. A removed
/// entry's file is let go at once, so that its disk space is freed when the last answer using it
/// is written. A file unlinked or cut short by another process is noticed by an `fstat` before
/// it is used again, and opened again: one check covers the uses of the next
/// ``checkedFor`` (a millisecond), so that a video seeked many times a millisecond costs one
/// `fstat`, not one a seek. That staleness changes nothing the check guarantees: it was never
/// atomic with the `sendfile` after it, and another process cannot recycle a file held here
/// (its shared lock, `POSIX.openBodyForReading`).
package final class OpenBodyFiles: Sendable {
    /// The most files held open.
    static let capacity = 128
    /// How long, in nanoseconds, one check that a held file is still linked and whole covers
    /// its uses.
    package static let checkedFor: UInt64 = 1_000_000

    /// A held file and when it was last found linked and whole (`DispatchTime` nanoseconds).
    private struct Held {
        var file: OpenBodyFile
        var checked: UInt64
    }

    private let files = Locked([Int64: Held]())

    /// The open file of `entry` when it is held, still linked and still `size` bytes long.
    func file(of entry: Int64, name: String, size: Int) -> OpenBodyFile? {
        guard let held = files.withLock({ $0[entry] }) else { return nil }
        let file = held.file
        guard file.name == name, file.size == size else {
            forget([entry])
            return nil
        }
        let now = DispatchTime.now().uptimeNanoseconds
        if now &- held.checked < Self.checkedFor { return file }
        guard POSIX.isLinked(file.descriptor, size: size) else {
            forget([entry])
            return nil
        }
        files.withLock { files in
            if files[entry]?.file === file { files[entry]?.checked = now }
        }
        return file
    }

    /// Holds `file` open for `entry`; it was found linked and whole just now.
    func keep(_ file: OpenBodyFile, for entry: Int64) {
        let held = Held(file: file, checked: DispatchTime.now().uptimeNanoseconds)
        // The files let go come out of the lock and are closed there, by their last holder.
        _ = files.withLock { files -> [Int64: Held] in
            var dropped: [Int64: Held] = [:]
            if files[entry] == nil, files.count >= Self.capacity { swap(&dropped, &files) }
            files[entry] = held
            return dropped
        }
    }

    /// Lets go of the files of `entries`.
    func forget(_ entries: some Sequence<Int64>) {
        _ = files.withLock { files in entries.compactMap { files.removeValue(forKey: $0) } }
    }

    /// Lets go of every file.
    func forgetAll() {
        _ = files.withLock { files -> [Int64: Held] in
            var dropped: [Int64: Held] = [:]
            swap(&dropped, &files)
            return dropped
        }
    }
}
