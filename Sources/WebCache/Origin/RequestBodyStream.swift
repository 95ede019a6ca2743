import HTTPCaching

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request body still arriving from the client while it goes to the origin — an upload through
/// the proxy — so that it is never held whole: its chunks in order, read once.
///
/// The producer (the client's connection) puts chunks in through a ``Source`` and stops reading
/// from its client when ``Source/yield(_:)`` says enough is buffered; it is told to go on
/// (`onDemand`) once the reader has taken the buffer down to half of that. When the reader stops
/// for good — the origin answered before the body was sent, or its connection failed — the
/// producer is told (`onTermination`) and sends nothing more.
///
/// ```swift
/// let (body, source) = RequestBodyStream.makeStream(length: 3, onDemand: { resume() })
/// _ = source.yield(Data("abc".utf8))
/// source.finish()
/// for try await chunk in body { upload(chunk) }
/// ```
public struct RequestBodyStream: AsyncSequence, Sendable {
    /// A chunk of the body, as the producer put it in.
    public typealias Element = Data

    /// The length the request declared (`Content-Length`); `nil` for a body sent chunked.
    public let length: Int?
    private let buffer: Buffer

    /// The bytes buffered by default before the producer is asked to stop.
    public static let defaultHighWatermark = 256 << 10

    /// A stream and the source its chunks go in through.
    /// - Parameters:
    ///   - length: the length the request declared, if it did.
    ///   - highWatermark: the bytes buffered before ``Source/yield(_:)`` says to stop.
    ///   - onDemand: called, once per stop, when the reader has taken the buffer down to half of
    ///     `highWatermark`: the producer reads from its client again.
    ///   - onTermination: called once when the reader stops before the end (``cancel()``, or its
    ///     task cancelled while it waits): the producer sends nothing more.
    public static func makeStream(
        length: Int?, highWatermark: Int = defaultHighWatermark, onDemand: @escaping @Sendable () -> Void = {},
        onTermination: @escaping @Sendable () -> Void = {}
    ) -> (stream: RequestBodyStream, source: Source) {
        let buffer = Buffer(highWatermark: highWatermark, onDemand: onDemand, onTermination: onTermination)
        return (RequestBodyStream(length: length, buffer: buffer), Source(buffer: buffer))
    }

    /// The reader will read no more: what is buffered is dropped and the producer is told.
    public func cancel() {
        buffer.cancel()
    }

    /// Calls `handler` once if the producer fails the body (at once if it has already): for a
    /// reader that may be waiting on something else than the next chunk — an origin that takes
    /// no more of the body — and must stop then.
    public func onFailure(_ handler: @escaping @Sendable (any Error) -> Void) {
        buffer.onFailure(handler)
    }

    /// The whole body, once it has all arrived; throws when the producer failed it, or when it
    /// passes `limit` bytes. For origins that cannot send a body as it arrives.
    public func collected(limit: Int = .max) async throws -> Data {
        var body = Data()
        if let length, length <= limit { body.reserveCapacity(length) }
        for try await chunk in self {
            guard chunk.count <= limit - body.count else {
                cancel()
                throw OriginError(.requestBodyTooLarge, "the request body is larger than \(limit) bytes")
            }
            body.append(chunk)
        }
        return body
    }

    /// The iterator over the body's chunks; the body is read once, whichever iterator reads it.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(buffer: buffer)
    }

    /// Reads the chunks in order; `nil` at the end; throws the producer's error.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let buffer: Buffer

        /// The next chunk; `nil` at the end.
        public mutating func next() async throws -> Data? {
            try await buffer.next()
        }
    }

    /// Where the producer puts the body's chunks.
    public struct Source: Sendable {
        fileprivate let buffer: Buffer

        /// Adds `chunk`; returns whether more may come now (`false` once the buffer holds the
        /// high watermark or more: wait for `onDemand`). Chunks after the reader stopped are
        /// dropped, and `false` returned.
        @discardableResult
        public func yield(_ chunk: Data) -> Bool {
            buffer.yield(chunk)
        }

        /// The body is complete.
        public func finish() {
            buffer.end(nil)
        }

        /// The body will not complete (the client went away): the reader gets `error`.
        public func fail(_ error: any Error) {
            buffer.end(error)
        }

        /// Whether the reader has stopped before the end.
        public var readerStopped: Bool { buffer.readerStopped }
    }

    /// The chunks between producer and reader, and who waits for whom.
    fileprivate final class Buffer: Sendable {
        private struct State {
            var chunks: [Data] = []
            var head = 0
            var bufferedBytes = 0
            var ended = false
            var error: (any Error)?
            var readerStopped = false
            var producerStopped = false
            var waiting: CheckedContinuation<Data?, any Error>?
            var failureHandler: (@Sendable (any Error) -> Void)?
        }

        private let state = Locked(State())
        private let highWatermark: Int
        private let onDemand: @Sendable () -> Void
        private let onTermination: @Sendable () -> Void

        init(
            highWatermark: Int, onDemand: @escaping @Sendable () -> Void,
            onTermination: @escaping @Sendable () -> Void
        ) {
            self.highWatermark = Swift.max(1, highWatermark)
            self.onDemand = onDemand
            self.onTermination = onTermination
        }

        var readerStopped: Bool { state.withLock { $0.readerStopped } }

        func yield(_ chunk: Data) -> Bool {
            let (waiting, more) = state.withLock { state -> (CheckedContinuation<Data?, any Error>?, Bool) in
                guard !state.readerStopped, !state.ended else { return (nil, false) }
                if let waiting = state.waiting {
                    state.waiting = nil
                    return (waiting, true)
                }
                state.chunks.append(chunk)
                state.bufferedBytes += chunk.count
                let more = state.bufferedBytes < highWatermark
                if !more { state.producerStopped = true }
                return (nil, more)
            }
            waiting?.resume(returning: chunk)
            return more
        }

        func end(_ error: (any Error)?) {
            let (waiting, failureHandler) = state.withLock { state in
                guard !state.ended, !state.readerStopped else {
                    return (CheckedContinuation<Data?, any Error>?.none, (@Sendable (any Error) -> Void)?.none)
                }
                state.ended = true
                state.error = error
                defer {
                    state.waiting = nil
                    state.failureHandler = nil
                }
                return (state.waiting, error == nil ? nil : state.failureHandler)
            }
            if let error {
                failureHandler?(error)
                waiting?.resume(throwing: error)
            } else {
                waiting?.resume(returning: nil)
            }
        }

        func onFailure(_ handler: @escaping @Sendable (any Error) -> Void) {
            let failed = state.withLock { state -> (any Error)? in
                if state.ended { return state.error }
                state.failureHandler = handler
                return nil
            }
            if let failed { handler(failed) }
        }

        func cancel() {
            let stopped = state.withLock { state -> Bool in
                guard !state.readerStopped else { return false }
                state.readerStopped = true
                state.chunks = []
                state.head = 0
                state.bufferedBytes = 0
                return !state.ended
            }
            if stopped { onTermination() }
        }

        /// What the reader gets next: a chunk (and whether the producer is to go on now), the
        /// end, or `nil` to wait.
        private enum Taken {
            case chunk(Data, demand: Bool)
            case end(error: (any Error)?)
        }

        private func take(_ state: inout State) -> Taken? {
            if state.readerStopped { return .end(error: CancellationError()) }
            guard state.head < state.chunks.count else { return state.ended ? .end(error: state.error) : nil }
            let chunk = state.chunks[state.head]
            state.head += 1
            if state.head == state.chunks.count {
                state.chunks.removeAll(keepingCapacity: true)
                state.head = 0
            }
            state.bufferedBytes -= chunk.count
            let demand = state.producerStopped && state.bufferedBytes <= highWatermark / 2 && !state.ended
            if demand { state.producerStopped = false }
            return .chunk(chunk, demand: demand)
        }

        private func deliver(_ taken: Taken) -> Result<Data?, any Error> {
            switch taken {
            case .chunk(let chunk, let demand):
                if demand { onDemand() }
                return .success(chunk)
            case .end(let error):
                return error.map { .failure($0) } ?? .success(nil)
            }
        }

        func next() async throws -> Data? {
            if let taken = state.withLock({ take(&$0) }) { return try deliver(taken).get() }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                    // Taken, or waited for: a chunk may have come since the look above.
                    let taken = state.withLock { state -> Taken? in
                        if let taken = take(&state) { return taken }
                        state.waiting = continuation
                        return nil
                    }
                    if let taken { continuation.resume(with: deliver(taken)) }
                }
            } onCancel: {
                let waiting = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
                    defer { state.waiting = nil }
                    return state.waiting
                }
                cancel()
                waiting?.resume(throwing: CancellationError())
            }
        }
    }
}

extension OriginError {
    /// The error of an exchange whose streamed request body its producer failed with `cause`:
    /// `cause` itself when it is an `OriginError` (it says what was wrong with the body, such
    /// as `.requestBodyTooLarge`), else `.invalidRequest` — the request's fault, no
    /// verdict on the origin at `url`.
    public static func requestBodyFailed(_ cause: any Error, url: URL?) -> OriginError {
        if let error = cause as? OriginError { return error }
        return OriginError(
            .invalidRequest, "the request body for \(url?.absoluteString ?? "the origin") did not arrive whole",
            cause: cause)
    }
}
