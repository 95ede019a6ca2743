#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What is made of a broadcast: a range of it that follows it and the whole (read as any reader
/// does, ``BodyBroadcast/chunk(at:)``), and the moments its first bytes and its end arrive
/// (``BodyBroadcast/firstBytes(_:)``, which reads no chunk).
extension BodyBroadcast {
    /// The bytes `range` of this body, as another broadcast that follows this one as it arrives.
    func slice(_ range: Range<Int>) -> BodyBroadcast {
        let slice = BodyBroadcast()
        CallersLoop.task { [self] in
            var position = 0
            var index = 0
            do {
                while position < range.upperBound, let chunk = try await chunk(at: index) {
                    let chunkRange = position..<(position + chunk.count)
                    let wanted = chunkRange.clamped(to: range)
                    if !wanted.isEmpty {
                        let start = chunk.startIndex + (wanted.lowerBound - position)
                        slice.append(chunk[start..<(start + wanted.count)])
                    }
                    position += chunk.count
                    index += 1
                }
                if position < range.upperBound {
                    slice.fail(
                        CacheError(
                            .originFailed, "the body ended after \(position) bytes, before the range \(range) was whole"
                        ))
                } else {
                    slice.finish()
                }
            } catch {
                slice.fail(error)
            }
        }
        return slice
    }

    /// Returns once the body has ended, whole or not (then the store has what it will keep).
    nonisolated(nonsending) func ended() async {
        try? await firstBytes(.max)
    }

    /// The whole body, once it has arrived.
    func collect() async throws -> Data {
        var body = Data()
        var index = 0
        while let chunk = try await chunk(at: index) {
            body.append(chunk)
            index += 1
        }
        return body
    }
}
