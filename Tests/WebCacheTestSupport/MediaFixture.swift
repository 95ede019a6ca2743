import Foundation

/// A stand-in for a video: a body whose every byte depends on its position, served as
/// `/clip.webm` with a strong validator, so that a wrong range or a byte out of place shows.
public enum MediaFixture {
    /// 200,000 letters, each depending on its position (ASCII, so a raw exchange reads it back
    /// byte for byte).
    public static let media = Fixtures.bytes(200_000) { position in
        let mixed: Int = position &* 7 &+ (position >> 8)
        return UInt8(65 + mixed % 26)
    }

    /// Serves ``media`` at `/clip.webm` on `origin`: fresh for ten minutes, with an `ETag` and a
    /// `Last-Modified`; the origin itself ignores `Range`.
    public static func route(_ origin: TestOrigin) {
        origin.route("/clip.webm") { _ in
            TestOrigin.Response(
                headers: [
                    ("Content-Type", "video/webm"), ("Cache-Control", "max-age=600"), ("ETag", "\"clip-1\""),
                    ("Last-Modified", "Fri, 20 Nov 2026 12:00:00 GMT"),
                ],
                body: media)
        }
    }

    /// Serves ``media`` at `/ranged.webm` on `origin`, which answers ranges itself (one range
    /// per request, as media servers do) and says so with `Accept-Ranges: bytes`.
    public static func routeRanged(_ origin: TestOrigin) {
        origin.route("/ranged.webm") { request in
            let headers = [
                ("Content-Type", "video/webm"), ("Cache-Control", "max-age=600"), ("ETag", "\"r1\""),
                ("Accept-Ranges", "bytes"),
            ]
            guard let piece = rangedPiece(of: media, for: request.header("Range")) else {
                return TestOrigin.Response(headers: headers, body: media)
            }
            return TestOrigin.Response(
                status: 206, headers: headers + [("Content-Range", piece.contentRange)],
                body: media.subdata(in: piece.range))
        }
    }
}

/// Seconds a piece of work took on the continuous clock, for loose upper bounds in tests of
/// behaviour that must not wait (an offline answer that must not sit out a retry loop).
public func secondsTaken(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}
