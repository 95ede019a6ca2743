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

/// Answers sent before, replayed to the same request while the engine confirms they stand.
extension CachingProxy {
    /// The answer this proxy sent to the same request before, when the engine confirms it still
    /// stands (``ReplayCache``), counted as sent; `nil` otherwise. For a request with a `Range`,
    /// a range of the entry the engine resolves anew.
    func replayedAnswer(
        to identity: RequestIdentity, from answers: ReplayCache, persistence: ConnectionPersistence,
        allocator: ByteBufferAllocator
    ) -> EncodedAnswer? {
        // An answer chosen for another client's field values is left for that client.
        guard let answer = answers.answer(to: identity), answer.selects(identity) else { return nil }
        let encoded: EncodedAnswer
        switch answer.wire {
        case .rangeOfEntryFile(let fields):
            return replayedRange(
                answer, fields: fields, to: identity, from: answers, persistence: persistence, allocator: allocator)
        case .buffer(let bytes):
            encoded = .bytes(bytes)
        case .headThenEntryFile(let responseHead):
            guard let file = cache.openBodyFile(of: answer.terms).map(StoredBodyFile.init) else {
                answers.forget(identity)
                return nil
            }
            encoded = .headThenFile(responseHead, file)
        case .wholeFile(let file):
            encoded = .wholeFile(file)
        }
        guard cache.confirmReplay(answer.terms) else {
            answers.forget(identity)
            return nil
        }
        metrics.countResponse(status: answer.status)
        return encoded
    }

    /// The range `identity`'s request asks for, of the entry `answer` sent a range of, when the
    /// engine confirms the entry stands and resolves the range to one of at least
    /// ``StoredBodyFile/minimumSize`` bytes; `nil` otherwise (the engine answers the request).
    private func replayedRange(
        _ answer: RecordedAnswer, fields: ByteBuffer, to identity: RequestIdentity, from answers: ReplayCache,
        persistence: ConnectionPersistence, allocator: ByteBufferAllocator
    ) -> EncodedAnswer? {
        guard identity.asksForRange else { return nil }
        guard var file = cache.openBodyFile(of: answer.terms).map(StoredBodyFile.init) else {
            answers.forget(identity)
            return nil
        }
        guard
            let resolved = identity.withRangeValue({
                cache.confirmRangeReplay(answer.terms, range: $0, minimumSize: StoredBodyFile.minimumSize)
            }), let range = resolved
        else { return nil }
        metrics.countResponse(status: 206)
        let head = Self.rangeHead(fields, range: range, of: &file, persistence: persistence, allocator: allocator)
        return .headThenFile(head, file)
    }

    /// Keeps an encoded fresh answer for the same request (see ``replayedAnswer(to:from:persistence:allocator:)``). A body
    /// that goes from its file is copied, with the head, into a ``WireFile`` when the whole
    /// answer is small enough to keep (``ReplayCache/largestWireFile``) and the platform has
    /// such files; otherwise its file is opened again for each replay.
    /// A request with a `Range` keeps only the 206 of one range sent from the entry's file, by its
    /// head's `rangeFields`, as the way to answer any range of the entry.
    func remember(
        _ encoded: EncodedAnswer, terms: ReplayTerms?, status: Int, rangeFields: ByteBuffer? = nil,
        for identity: RequestIdentity, in answers: ReplayCache
    ) {
        guard let terms, let selectingFields = Self.selectingFields(of: terms, for: identity) else { return }
        let wire: RecordedAnswer.Wire
        var rangeValue: String?
        if let rangeFields {
            guard identity.asksForRange, status == 206, answers.admits(identity) else { return }
            wire = .rangeOfEntryFile(rangeFields)
        } else {
            // Any other answer to a `Range` holds for that value of it alone.
            rangeValue = identity.range
            guard !identity.asksForRange || rangeValue != nil else { return }
            switch encoded {
            case .bytes(let bytes):
                guard answers.admits(identity) else { return }
                wire = .buffer(bytes)
            case .headThenFile(let head, let file):
                // Only a whole body: a range of it (a 206) is not replayed from the entry's file.
                guard file.offset == 0, file.size == file.file.size, answers.admits(identity) else { return }
                let whole =
                    head.readableBytes + file.size <= ReplayCache.largestWireFile
                    ? WireFile.make(
                        head: head, body: file.file.descriptor, bodySize: file.size, directory: wireFileDirectory)
                    : nil
                wire = whole.map { .wholeFile($0) } ?? .headThenEntryFile(head)
            case .wholeFile:
                return
            }
        }
        // Kept with bytes of its own: the head it came with shares the memory of a read.
        answers.remember(
            RecordedAnswer(
                wire: wire, status: status, terms: terms, selectingFields: selectingFields, rangeValue: rangeValue),
            for: identity.detached())
    }

    /// The client-specific fields of `identity`'s request that chose the answer under `terms`,
    /// with their values (``RecordedAnswer/selectingFields``); `nil` for an answer chosen by
    /// every field (`Vary: *`), which is not kept.
    static func selectingFields(of terms: ReplayTerms, for identity: RequestIdentity) -> [(
        name: String, value: String?
    )]? {
        var names: [String]
        switch terms.vary {
        case .none: names = []
        case .any: return nil
        case .fields(let fields): names = fields.map(\.canonicalName).filter(ClientSpecificFields.contains)
        }
        if terms.readsUserAgent, !names.contains("user-agent") { names.append("user-agent") }
        return names.map { ($0, identity.values(of: $0)) }
    }
}
