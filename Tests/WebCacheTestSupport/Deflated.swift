import CZlib
import Foundation

/// Data compressed with zlib, for tests of bodies sent in a transfer or content coding.
public enum Deflated {
    /// The container around the deflate data: gzip's (RFC 1952) or zlib's (RFC 1950).
    public enum Format: Sendable {
        case gzip, zlib
    }

    /// `data` compressed in `format`.
    public static func compressed(_ data: Data, format: Format = .gzip) -> Data {
        // zlib keeps the stream's address: it must not move between calls.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deallocate() }
        let windowBits: Int32 = format == .gzip ? 15 + 16 : 15
        guard
            deflateInit2_(
                stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
                Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { fatalError("zlib would not start compressing") }
        defer { deflateEnd(stream) }
        var input = [UInt8](data)
        var output = [UInt8](repeating: 0, count: Int(deflateBound(stream, UInt(input.count))) + 64)
        let produced = input.withUnsafeMutableBufferPointer { input in
            output.withUnsafeMutableBufferPointer { output -> Int in
                stream.pointee.next_in = input.baseAddress
                stream.pointee.avail_in = UInt32(input.count)
                stream.pointee.next_out = output.baseAddress
                stream.pointee.avail_out = UInt32(output.count)
                guard deflate(stream, Z_FINISH) == Z_STREAM_END else { fatalError("zlib did not finish") }
                return output.count - Int(stream.pointee.avail_out)
            }
        }
        return Data(output[0..<produced])
    }
}
