import Foundation
import HTTPCaching

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One data task of ``URLSessionOrigin``: its head handed to the caller once it arrives, its
/// body to a stream as it arrives, its pace followed by suspending the task.
final class URLSessionTransfer: Sendable {
    private struct State {
        var head: CheckedContinuation<URLResponse, any Error>?
        var headDelivered = false
        /// Suspended by this transfer for its pace (and not resumed since).
        var suspended = false
        /// Given up: what still arrives is dropped.
        var abandoned = false
    }

    let task: URLSessionDataTask
    let url: URL
    let body: AsyncThrowingStream<Data, any Error>.Continuation
    private let state = Locked(State())
    /// The body's pace: the task is suspended while its reader is behind; the body given up
    /// stops the transfer (``abandon()``).
    let pacing: OriginBodyPacing

    init(task: URLSessionDataTask, url: URL, body: AsyncThrowingStream<Data, any Error>.Continuation) {
        self.task = task
        self.url = url
        self.body = body
        let state = self.state
        pacing = OriginBodyPacing(
            resume: {
                let suspended = state.withLock { state in
                    defer { state.suspended = false }
                    return state.suspended
                }
                if suspended { task.resume() }
            },
            abandon: { Self.abandon(state: state, body: body, task: task) })
    }

    /// Whether a transfer given up cancels its data task. swift-corelibs-foundation (Linux) has a
    /// family of crashes when a libcurl-backed task is cancelled mid-transfer while others run
    /// (use-after-free in its `_MultiHandle`; swift-corelibs-foundation#4791, #5469): there the
    /// transfer runs to its end and what arrives is dropped, which costs the origin's bandwidth
    /// but never the process.
    #if canImport(FoundationNetworking)
    static let cancelsWhenAbandoned = false
    #else
    static let cancelsWhenAbandoned = true
    #endif

    /// Nothing will read the rest (the reader went, or the caller was cancelled before the head):
    /// a caller waiting for the head, and the body, end with `CancellationError`; the task is
    /// cancelled where that is safe, else what still arrives is dropped.
    func abandon() {
        Self.abandon(state: state, body: body, task: task)
    }

    private static func abandon(
        state: Locked<State>, body: AsyncThrowingStream<Data, any Error>.Continuation, task: URLSessionDataTask
    ) {
        let waiting = state.withLock { state -> CheckedContinuation<URLResponse, any Error>? in
            state.abandoned = true
            defer { state.head = nil }
            return state.head
        }
        waiting?.resume(throwing: CancellationError())
        body.finish(throwing: CancellationError())
        if cancelsWhenAbandoned { task.cancel() }
    }

    /// Starts the task with `start` and returns its response head.
    func head(starting start: () -> Void) async throws -> URLResponse {
        try await withCheckedThrowingContinuation { continuation in
            state.withLock { $0.head = continuation }
            start()
        }
    }

    /// The head arrived.
    func received(_ response: URLResponse) {
        let waiting = state.withLock { state in
            defer { state.head = nil }
            state.headDelivered = true
            return state.head
        }
        waiting?.resume(returning: response)
    }

    private var isAbandoned: Bool { state.withLock { $0.abandoned } }

    /// Whether a data task is suspended to follow the pace: on Apple platforms a suspended task
    /// reads nothing more from the network. swift-corelibs-foundation (Linux) goes on delivering
    /// to a suspended task, and traps in `suspend()` while a transfer is under way
    /// (`NativeProtocol.swift:69`): there the pace is not followed.
    #if canImport(FoundationNetworking)
    static let suspendsForPace = false
    #else
    static let suspendsForPace = true
    #endif

    /// Body bytes arrived: counted for the pace before they are handed over (their reader may
    /// take them, and resume the task, at once), the task suspended when the reader is behind.
    func received(_ data: Data) {
        guard !isAbandoned else { return }
        if pacing.produced(data.count), Self.suspendsForPace {
            let suspending = state.withLock { state in
                defer { state.suspended = true }
                return !state.suspended
            }
            if suspending { task.suspend() }
        }
        body.yield(data)
    }

    /// The task ended: the body ends, or the head's wait fails with the error.
    func completed(with error: (any Error)?) {
        let (waiting, delivered) = state.withLock { state in
            defer { state.head = nil }
            return (state.head, state.headDelivered)
        }
        guard delivered else {
            let failure =
                error.map { URLSessionOrigin.classify($0, url: url) }
                ?? OriginError(.invalidResponse, "\(url.absoluteString) ended without a response")
            waiting?.resume(throwing: failure)
            body.finish(throwing: failure)
            return
        }
        if let error {
            body.finish(
                throwing: OriginError(
                    .unreachable, "the body from \(url.absoluteString) stopped arriving", cause: error))
        } else {
            body.finish()
        }
    }
}

/// The session delegate of ``URLSessionOrigin``: hands each task's events to its transfer, and
/// refuses redirects, so that the caller gets each 3xx and the cache stores each hop.
final class URLSessionTransfers: NSObject, URLSessionDataDelegate, Sendable {
    private let transfers = Locked<[Int: URLSessionTransfer]>([:])

    /// Registers `transfer` and starts its task.
    func start(_ transfer: URLSessionTransfer) {
        transfers.withLock { $0[transfer.task.taskIdentifier] = transfer }
        transfer.task.resume()
    }

    private func transfer(of task: URLSessionTask) -> URLSessionTransfer? {
        transfers.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        transfer(of: dataTask)?.received(response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(of: dataTask)?.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let transfer = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        transfer?.completed(with: error)
    }
}
