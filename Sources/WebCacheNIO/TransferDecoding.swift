import CZlib

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Undoes the transfer coding a response's content came in besides `chunked` (RFC 9112 §7):
/// `gzip` (or `x-gzip`) and `deflate` (zlib's format, RFC 9112 §7.2), so that what a client gets
/// and the cache stores is the content, not its coding. Transfer codings are the connection's
/// (the field is hop-by-hop): passed on without the field that names them, the coded bytes
/// would be taken for the content.
///
/// A coding it does not know (`compress`, a token of an origin's own), or more than one, is
/// left as it came, as an intermediary that does not implement a coding passes it on: the
/// public cache-tests suite expects a response under an unknown coding stored and served, and
/// those codings are not seen in practice.
///
/// One decoder per response body, fed its pieces in order on one thread. A body that is not
/// valid in its coding, ends before the coding does, or decodes to more than the limit fails
/// with a ``TransferDecodingError``.
package final class TransferDecoding {
    private let stream: UnsafeMutablePointer<z_stream>
    private let coding: String
    private let limit: Int
    private var output = [UInt8](repeating: 0, count: 64 << 10)
    private var decoded = 0
    private var sawInput = false
    /// The coded data ended (a gzip member, or the zlib stream); more input starts another
    /// gzip member.
    private var ended = false

    /// A decoder for a body whose `Transfer-Encoding` field values are `values`, or `nil` when
    /// there is nothing it undoes (see ``coding(transferEncoding:)``).
    package static func make(transferEncoding values: [String], limit: Int) throws(TransferDecodingError)
        -> TransferDecoding?
    {
        guard let coding = coding(transferEncoding: values) else { return nil }
        return try TransferDecoding(coding: coding, limit: limit)
    }

    /// The coding to undo for a body whose `Transfer-Encoding` field values are `values`
    /// (lowercased): `gzip`, `x-gzip` or `deflate` when it is the one coding besides `chunked`
    /// (and `identity`); else `nil`, and the body is left as it came.
    package static func coding(transferEncoding values: [String]) -> String? {
        // What nearly every chunked response says, decided without taking the field apart.
        if values.count == 1, values[0].utf8.elementsEqual("chunked".utf8) { return nil }
        let codings = values.flatMap { $0.split(separator: ",") }.compactMap { element -> String? in
            let name = element.split(separator: ";", maxSplits: 1).first ?? ""
            let coding = name.trimmingCharacters(in: .whitespaces).lowercased()
            return coding.isEmpty || coding == "chunked" || coding == "identity" ? nil : coding
        }
        guard codings.count == 1, let coding = codings.first, ["gzip", "x-gzip", "deflate"].contains(coding) else {
            return nil
        }
        return coding
    }

    /// A decoder for `coding`, one that ``coding(transferEncoding:)`` returned, whose content
    /// may be at most `limit` bytes.
    package init(coding: String, limit: Int) throws(TransferDecodingError) {
        self.coding = coding
        self.limit = limit
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 15 bits of window; +32 reads a gzip or a zlib header, whichever came.
        guard inflateInit2_(stream, 15 + 32, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deallocate()
            throw TransferDecodingError("could not start decoding the \(coding) transfer coding")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// The content in the next piece of the coded body.
    package func decode(_ bytes: UnsafeRawBufferPointer) throws(TransferDecodingError) -> Data {
        var content = Data()
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return content }
        sawInput = true
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = UInt32(bytes.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        while true {
            if ended {
                guard stream.pointee.avail_in > 0 else { break }
                // Another gzip member follows (RFC 1952 §2.2); anything else fails below.
                guard coding != "deflate" else { throw corrupt("data follows the end of the coded body") }
                inflateReset(stream)
                ended = false
            }
            let (status, produced) = output.withUnsafeMutableBufferPointer { output -> (Int32, Int) in
                stream.pointee.next_out = output.baseAddress
                stream.pointee.avail_out = UInt32(output.count)
                let status = inflate(stream, Z_NO_FLUSH)
                return (status, output.count - Int(stream.pointee.avail_out))
            }
            decoded += produced
            guard decoded <= limit else {
                throw TransferDecodingError(
                    "the body decoded from its \(coding) transfer coding is larger than \(limit) bytes")
            }
            content.append(contentsOf: output[0..<produced])
            switch status {
            case Z_STREAM_END: ended = true
            case Z_OK, Z_BUF_ERROR: break
            default:
                let detail =
                    stream.pointee.msg.map { String(cString: $0) } ?? zError(status).map { String(cString: $0) }
                throw corrupt(detail ?? "zlib status \(status)")
            }
            // Done with this piece once its input is taken and the output had room to spare.
            if !ended && stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0 { break }
            if !ended && produced == 0 && status == Z_BUF_ERROR { break }
        }
        return content
    }

    /// The body is over: throws when its coding was cut off before its end.
    package func finish() throws(TransferDecodingError) {
        guard ended || !sawInput else {
            throw TransferDecodingError("the body ended inside its \(coding) transfer coding: it was cut off")
        }
    }

    private func corrupt(_ detail: String) -> TransferDecodingError {
        TransferDecodingError("the body's \(coding) transfer coding is not valid (\(detail))")
    }
}

/// A response body whose transfer coding could not be undone.
package struct TransferDecodingError: Error, CustomStringConvertible {
    package let description: String

    init(_ description: String) {
        self.description = description
    }
}
