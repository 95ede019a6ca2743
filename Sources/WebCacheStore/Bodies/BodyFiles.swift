#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The layout of body files: `bodies/<namespace>/<xx>/<hash>-<unique>.body`, where `<namespace>`
/// and `<hash>` are FNV-1a hashes of the namespace and of the key and variant. Each write gets a
/// new unique suffix, so a reader streaming the old body of a replaced entry is never disturbed.
/// A body is written under its final name; until its row is in the index nothing reaches it,
/// and recovery deletes it (as it deletes the `….tmp` files earlier versions wrote).
struct BodyFiles: Sendable {
    let root: String
    let namespaceDirectory: String

    static let bodySuffix = ".body"

    init(directory: URL, namespace: String) {
        root = directory.appendingPathComponent("bodies").path
        namespaceDirectory = Self.hex(Self.fnv1a(namespace))
    }

    /// A new relative name for a body of `key` and `varyKey`.
    func newName(key: CacheKey, varyKey: String) -> String {
        let hash = Self.hex(Self.fnv1a("\(key.method) \(key.url)\n\(varyKey)"))
        let unique = Self.hex(UInt64.random(in: 0...UInt64.max))
        let shard = hash.prefix(2)
        return "\(namespaceDirectory)/\(shard)/\(hash)-\(unique)\(Self.bodySuffix)"
    }

    func path(_ name: String) -> String { "\(root)/\(name)" }

    /// Whether `name` has the shape ``newName(key:varyKey:)`` gives (`<hex>/<hex>/<hex>-<hex>.body`),
    /// so that it names a file under the root: a name read from a damaged index (`../x`, `/x`)
    /// is neither read nor deleted.
    static func isBodyName(_ name: String) -> Bool {
        guard name.hasSuffix(bodySuffix) else { return false }
        let parts = name.dropLast(bodySuffix.count).utf8.split(
            separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count == 3 else { return false }
        let hexOrDash = { (byte: UInt8) in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || byte == UInt8(ascii: "-")
        }
        return parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(hexOrDash) }
    }

    /// Creates the directories a body named `name` needs.
    func prepareDirectories(for name: String) throws {
        let parts = name.split(separator: "/")
        var current = root
        try POSIX.makeDirectory(current)
        for part in parts.dropLast() {
            current += "/\(part)"
            try POSIX.makeDirectory(current)
        }
    }

    /// Every file under the root, as relative names (`ns/xx/file`), for recovery sweeps.
    func allFiles() -> [String] {
        var names: [String] = []
        for namespace in POSIX.list(root) {
            for shard in POSIX.list("\(root)/\(namespace)") {
                for file in POSIX.list("\(root)/\(namespace)/\(shard)") {
                    names.append("\(namespace)/\(shard)/\(file)")
                }
            }
        }
        return names
    }

    /// Every file of this store's namespace, as relative names.
    func namespaceFiles() -> [String] {
        POSIX.list("\(root)/\(namespaceDirectory)").flatMap { shard in
            POSIX.list("\(root)/\(namespaceDirectory)/\(shard)").map { "\(namespaceDirectory)/\(shard)/\($0)" }
        }
    }

    /// Reads a whole body, checking its length always and its checksum when asked.
    func read(_ name: String, size: Int, checksum: UInt32, verify: Bool) throws -> Data {
        let (fd, actual) = try POSIX.openBodyForReading(path(name))
        defer { POSIX.closeFile(fd) }
        guard actual == size else {
            throw StoreError(.corruptBody, "body \(name) has \(actual) bytes, the index says \(size)")
        }
        var data = Data(count: size)
        try data.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < size {
                let read = try POSIX.readChunk(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[offset...]))
                guard read > 0 else {
                    throw StoreError(.corruptBody, "body \(name) ended after \(offset) of \(size) bytes")
                }
                offset += read
            }
        }
        if verify {
            let actualChecksum = data.withUnsafeBytes { CRC32.checksum($0) }
            guard actualChecksum == checksum else {
                throw StoreError(.corruptBody, "body \(name) does not match its checksum")
            }
        }
        return data
    }

    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
