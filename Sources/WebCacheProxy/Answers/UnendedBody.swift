import WebCache

/// A streamed body whose answer is over (the client has every byte its `Content-Length`
/// announced) while the stream has not ended: the engine ends it once the entry is committed.
/// A connection lets one such body go on behind the answers that follow, and waits for it
/// before the answer after next, so that a client sending miss after miss cannot run ahead of
/// the store's writer by more than one answer (each unended body holds memory until then).
struct UnendedBody: Sendable {
    let stream: ResponseBodyStream
    /// The first chunk the answer did not take.
    let index: Int

    /// Returns once the stream has ended, whole or not (the answer is not affected either way).
    nonisolated(nonsending) func ended() async {
        var rest = stream.makeAsyncIterator(startingAt: index)
        while (try? await rest.next()) != nil {}
    }
}
