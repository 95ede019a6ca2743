import HTTPCaching
import HTTPTypes
import HTTPWire
import NIOCore
import NIOHTTP1
import NIOPosix
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Answers from the store alone, encoded for the client, and the cache's answers with the proxy's
/// `Via`.
extension CachingProxy {
    /// The cache's answer from its store alone, when it has one (see
    /// `HTTPCache.storedResponse(for:mode:)`), encoded for `clientHead`: no task, no suspension.
    ///
    /// Stored bodies of ``StoredBodyFile/minimumSize`` bytes or more go from their files to the
    /// socket without being read into memory; when such a file cannot be opened (removed since),
    /// the answer is left to the engine, which reads the body and handles a broken entry. A fresh
    /// answer's encoding is kept for other requests the same entry answers alike in the same
    /// second (``EncodedAnswers``). With the answer come the engine's terms for replaying it (a
    /// fresh answer) and its status, and for one range of a body sent from its file the head's
    /// fields without the range's own, for ``remember(_:terms:status:rangeFields:for:in:)``.
    ///
    /// Without an answer, the trip to the origin the engine decided on, when it decided one, for
    /// ``respond(to:url:body:interim:trip:)``.
    func storedAnswer(
        for request: HTTPRequest, url: URL, clientHead: RequestHead, persistence: ConnectionPersistence,
        allocator: ByteBufferAllocator, trip: inout HTTPCache.OriginTrip?
    ) -> (answer: EncodedAnswer, terms: ReplayTerms?, status: Int, rangeFields: ByteBuffer?)? {
        // The encoding the engine agreed to share, found while it decided.
        var kept: (key: EncodedAnswers.Key, encoding: EncodedAnswers.Encoding, status: Int)?
        var offered: (key: EncodedAnswers.Key, offer: AnswerOffer)?
        let stored = cache.storedAnswer(for: request, url: url, bodyFilesFrom: StoredBodyFile.minimumSize) { offer in
            let key = EncodedAnswers.Key(offer, isHead: clientHead.method == .HEAD, persistence: persistence)
            offered = (key, offer)
            guard let found = encodedAnswers.encoding(for: key), found.encoding.answers(offer) else { return false }
            kept = (key, found.encoding, found.status)
            return true
        }
        switch stored {
        case nil:
            return nil
        case .origin(let decided)?:
            trip = decided
            return nil
        case .shared(let terms, let offer)?:
            guard let kept else { return nil }
            metrics.countResponse(status: kept.status)
            switch kept.encoding {
            case .whole(let bytes):
                return (.bytes(bytes), terms, kept.status, nil)
            case .headBeforeFile(let encodedHead):
                // The file is opened for this answer; should it be gone, the engine answers.
                guard offer.bodyInFile, let file = cache.openBodyFile(of: terms).map(StoredBodyFile.init) else {
                    encodedAnswers.forget(kept.key)
                    return nil
                }
                return (.headThenFile(encodedHead, file), terms, kept.status, nil)
            case .rangeHeadFields(let fields):
                guard let range = offer.range, var file = cache.openBodyFile(of: terms).map(StoredBodyFile.init)
                else {
                    encodedAnswers.forget(kept.key)
                    return nil
                }
                let head = Self.rangeHead(
                    fields, range: range, of: &file, persistence: persistence, allocator: allocator)
                // Kept for replay as the way to answer any one range of the entry.
                return (.headThenFile(head, file), terms, kept.status, fields)
            }
        case .built(let response)?:
            var file: StoredBodyFile?
            if let stored = response.storedFile {
                guard var opened = cache.openBodyFile(of: response).map(StoredBodyFile.init) else { return nil }
                opened.offset = stored.range.lowerBound
                opened.size = stored.range.count
                file = opened
            }
            let outgoing = outgoing(response.head, body: file.map { .file($0) } ?? .whole(response.body))
            let answer = encode(outgoing, allocator: allocator, persistence: persistence, method: clientHead.method)
            if let offered { keep(answer, of: outgoing, built: response, file: file, offered: offered) }
            return (answer, response.replayTerms, response.head.status.code, nil)
        }
    }

    /// The head of a 206 for `range` of `file`'s body: `fields` (the answer's head without
    /// `Content-Range`, `Content-Length` and `Connection`), then those three; `file` is narrowed
    /// to the range.
    static func rangeHead(
        _ fields: ByteBuffer, range: Range<Int>, of file: inout StoredBodyFile, persistence: ConnectionPersistence,
        allocator: ByteBufferAllocator
    ) -> ByteBuffer {
        let length = file.size
        (file.offset, file.size) = (range.lowerBound, range.count)
        var head = allocator.buffer(capacity: fields.readableBytes + ByteBuffer.longestRangeHeadEnd)
        head.writeImmutableBuffer(fields)
        head.writeRangeHeadEnd(range: range, completeLength: length, persistence: persistence)
        return head
    }

    /// Keeps the encoding of an answer the engine offered to share and then built, for the next
    /// requests it answers alike: a fresh whole answer (with its terms), or the 206 of the
    /// offered range sent from the body file, whose head is kept without its ending.
    private func keep(
        _ answer: EncodedAnswer, of outgoing: ProxyResponse, built response: CacheResponse, file: StoredBodyFile?,
        offered: (key: EncodedAnswers.Key, offer: AnswerOffer)
    ) {
        let status = response.head.status.code
        if let range = offered.offer.range {
            guard status == 206, let file, file.offset == range.lowerBound, file.size == range.count,
                case .headThenFile = answer
            else { return }
            var fields = ByteBuffer()
            fields.writeResponseHeadFields(outgoing.head)
            encodedAnswers.remember(.rangeHeadFields(fields), status: status, for: offered.key)
            return
        }
        guard response.replayTerms != nil else { return }
        switch answer {
        case .bytes(let bytes):
            encodedAnswers.remember(.whole(bytes), status: status, for: offered.key)
        case .headThenFile(let head, _):
            encodedAnswers.remember(.headBeforeFile(head), status: status, for: offered.key)
        case .wholeFile:
            break
        }
    }

    /// The cache's answer, from the store or the origin, or an error response that says what
    /// went wrong.
    ///
    /// `trip` is the engine's decision for the request, when
    /// ``storedAnswer(for:url:clientHead:persistence:allocator:trip:)`` has just made it.
    nonisolated(nonsending) func respond(
        to request: HTTPRequest, url: URL, body: Data?, bodyStream: RequestBodyStream? = nil,
        interim: InterimResponseHandler? = nil, trip: HTTPCache.OriginTrip? = nil
    ) async -> ProxyResponse {
        if let host = url.host, let refusal = await resolvedRefusal(for: host) { return refusal }
        do {
            var response = try await cache.streamingResponse(
                for: request, url: url, body: body, bodyStream: bodyStream, interim: interim, trip: trip)
            // The response lets go of its fields, so that `Via` is added to fields held nowhere
            // else: in the room the engine left, not to a copy of them.
            let head = response.head
            response.head.headerFields = HTTPFields()
            return outgoing(consume head, body: ProxyResponse.Body(response.body))
        } catch {
            return ErrorAnswers.response(for: error)
        }
    }

    /// `head` with this proxy in its `Via`, and `body`: an answer as it leaves. The head is
    /// taken, so that a caller that hands over the only reference to its fields has `Via` added
    /// in place.
    private func outgoing(_ head: consuming HTTPResponse, body: ProxyResponse.Body) -> ProxyResponse {
        addVia(to: &head.headerFields, version: .http1_1)
        return ProxyResponse(head: head, body: body)
    }
}
