import HTTPWire
import NIOCore
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Request bodies sent to the origin as they arrive (``ProxyConfiguration/streamsRequestBodiesFrom``):
/// the request is answered from the moment its body is known to be large — at its head when it
/// declares its length, once that much has come when it is chunked — and its body parts go into
/// a ``RequestBodyStream`` as they are parsed. Reading from the client stops while the stream
/// holds what the origin has not taken yet, and resumes when it has.
extension ProxyHTTPHandler {
    /// Where the body of the request in progress goes.
    enum Upload {
        /// Held whole in ``ProxyHTTPHandler/body`` (or there is no body).
        case none
        /// Into the stream the answer's exchange reads.
        case streaming(RequestBodyStream.Source)
        /// Nowhere: the stream failed (the body passed the limit), the rest is read and dropped.
        case dropped
    }

    /// Whether the body of a request with `head` streams once it is `size` bytes: not for GET
    /// and HEAD (the cache may answer them, and whatever body they have is held whole), nor
    /// for `CONNECT`.
    func streamsBody(of head: RequestHead, size: Int) -> Bool {
        switch head.method {
        case .GET, .HEAD, .CONNECT: false
        default: size >= proxy.configuration.streamsRequestBodiesFrom
        }
    }

    /// Whether the body of a request with `head` streams from the head on: it declares a length
    /// large enough.
    func streamsBodyFromHead(_ head: RequestHead) -> Bool {
        guard case .length(let length) = head.framing else { return false }
        return streamsBody(of: head, size: length)
    }

    /// Answers the request in progress now, its body (what has come of it, then the rest as it
    /// comes) streaming to the origin.
    func startUpload(context: ChannelHandlerContext, head requestHead: RequestHead) {
        let length: Int? = if case .length(let length) = requestHead.framing { length } else { nil }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let (stream, source) = RequestBodyStream.makeStream(
            length: length,
            onDemand: {
                loopBound.eventLoop.execute {
                    let (handler, context) = loopBound.value
                    if handler.state.uploadResumed() { context.read() }
                }
            })
        let received = body
        body = ByteBuffer()
        releaseBody()
        uploaded = received.readableBytes
        upload = .streaming(source)
        state.startStreamingBody()
        if received.readableBytes > 0 && !source.yield(Data(received.readableBytesView)) {
            state.uploadFull()
        }
        // The streaming state is set before the answer starts: one written on the spot (a
        // refusal) then closes the connection rather than read a body nothing takes.
        respond(context: context, head: requestHead, bodyStream: stream)
    }

    /// A part of a streamed body: into the stream, or dropped once it has failed.
    func upload(_ chunk: ByteBuffer) {
        guard case .streaming(let source) = upload else { return }
        uploaded += chunk.readableBytes
        guard uploaded <= proxy.configuration.maximumRequestBodySize else {
            failUpload(
                OriginError(
                    .requestBodyTooLarge,
                    "the request body is larger than \(proxy.configuration.maximumRequestBodySize) bytes"))
            return
        }
        if !source.yield(Data(chunk.readableBytesView)) { state.uploadFull() }
    }

    /// The streamed body is complete.
    func finishUpload() {
        if case .streaming(let source) = upload { source.finish() }
        upload = .none
    }

    /// The streamed body will not be complete (`reason`): its exchange with the origin fails,
    /// and what more of it comes is dropped.
    func failUpload(_ reason: String) {
        failUpload(OriginError(.invalidRequest, reason))
    }

    /// The streamed body will not be complete: its exchange with the origin fails with `error`,
    /// and what more of it comes is dropped.
    func failUpload(_ error: OriginError) {
        guard case .streaming(let source) = upload else { return }
        source.fail(error)
        upload = .dropped
    }
}
