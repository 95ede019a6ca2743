import NIOCore
import WebCache

/// A request body still arriving, as the buffers AsyncHTTPClient sends: the chunks of a
/// ``RequestBodyStream``, each copied once. A failure of the body's producer comes out as
/// ``BodyFailed`` so that the exchange's error says the body, not the origin, was at fault.
struct UploadChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let body: RequestBodyStream

    /// The body's producer failed it (its client went away); `cause` is its error.
    struct BodyFailed: Error {
        let cause: any Error
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(chunks: body.makeAsyncIterator())
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: RequestBodyStream.AsyncIterator

        mutating func next() async throws -> ByteBuffer? {
            do {
                return try await chunks.next().map { ByteBuffer(bytes: $0) }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw BodyFailed(cause: error)
            }
        }
    }
}
