import Foundation
import HTTPCaching
import HTTPTypes

/// Builders for requests, responses and stored responses in tests.
///
/// Header lines are written as `"Name: value"`. In values, `@N` stands for the HTTP date `N`
/// seconds after ``Fixtures/epoch`` (negative for before), so rows read like the cache-tests
/// suite: `"Date: @0"`, `"Expires: @3600"`, `"Last-Modified: @-86400"`.
public enum Fixtures {
    /// The instant at which test responses are received, unless a test says otherwise.
    public static let epoch = Date(timeIntervalSince1970: 1_763_700_000)  // 2025-11-21

    /// The HTTP date `offset` seconds after ``epoch``.
    public static func httpDate(_ offset: Int) -> String {
        HTTPDate.format(epoch.addingTimeInterval(TimeInterval(offset)))
    }

    /// Parses `"Name: value"` lines into fields, expanding `@N` dates.
    public static func fields(_ lines: [String]) -> HTTPFields {
        var fields = HTTPFields()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { preconditionFailure("not a header line: \(line)") }
            let name = HTTPField.Name(String(line[..<colon]))!
            var value = String(line[line.index(after: colon)...])
            if value.hasPrefix(" ") { value.removeFirst() }
            fields.append(HTTPField(name: name, value: expandDates(value)))
        }
        return fields
    }

    static func expandDates(_ value: String) -> String {
        guard value.hasPrefix("@"), let offset = Int(value.dropFirst()) else { return value }
        return httpDate(offset)
    }

    /// A request for `url` with `headers`.
    public static func request(
        _ method: HTTPRequest.Method = .get, _ url: String = "https://example.com/resource",
        _ headers: [String] = []
    ) -> HTTPRequest {
        HTTPRequest(method: method, url: URL(string: url)!, headerFields: fields(headers))
    }

    /// A response with `status` and `headers`.
    public static func response(_ status: Int = 200, _ headers: [String] = []) -> HTTPResponse {
        HTTPResponse(status: .init(code: status), headerFields: fields(headers))
    }

    /// A stored response received at ``epoch`` (sent `latency` seconds earlier).
    public static func stored(
        status: Int = 200, _ headers: [String], request: [String] = [],
        method: HTTPRequest.Method = .get, url: String = "https://example.com/resource", latency: Int = 0
    ) -> StoredResponse {
        StoredResponse(
            request: Fixtures.request(method, url, request),
            response: response(status, headers),
            requestTime: epoch.addingTimeInterval(TimeInterval(-latency)),
            responseTime: epoch)
    }

    /// ``epoch`` plus `seconds`.
    public static func at(_ seconds: Int) -> Date { epoch.addingTimeInterval(TimeInterval(seconds)) }

    /// `count` bytes, the one at each position given by `byte`. Written in place: a test build is
    /// unoptimised, where `Data((0..<n).map(byte))` takes a second per 3 MB — and a fixture
    /// made on first use may be made on an event loop (an origin's route), which stands still
    /// meanwhile for every test whose connections it runs.
    public static func bytes(_ count: Int, _ byte: (Int) -> UInt8) -> Data {
        var bytes = Data(count: count)
        bytes.withUnsafeMutableBytes { buffer in
            for index in buffer.indices { buffer[index] = byte(index) }
        }
        return bytes
    }

    /// `size` bytes that change with the position (and the `seed`), so that a shifted, cut,
    /// repeated or foreign byte shows: for bodies compared as bytes.
    public static func patternedBytes(_ size: Int, seed: Int = 0) -> Data {
        bytes(size) { UInt8(truncatingIfNeeded: $0 &* 31 &+ ($0 >> 9) &+ seed &* 7) }
    }

    /// `size` lowercase letters that change with the position (and the `seed`): for bodies read
    /// back as text, from a raw exchange or a terminal.
    public static func patternedLetters(_ size: Int, seed: Int = 0) -> Data {
        let letters = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        return bytes(size) { letters[($0 &* 7 &+ $0 / 251 &+ seed) % letters.count] }
    }
}
