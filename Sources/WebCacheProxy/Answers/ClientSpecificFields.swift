import HTTPWire

/// Request fields that each client sends its own way and that no cached answer is chosen or
/// built by (RFC 9111 reads none of them to reuse a stored response): the browser and its
/// version, its cookies, the page it came from, what it accepts, fetch metadata and tracing ids.
///
/// A replayed answer (``ReplayCache``) is kept for requests that differ only in these, so that
/// every browser asking for the same thing shares it — the requests a proxy sees from many
/// clients rarely repeat byte for byte. Where an answer does depend on one of them (the stored
/// response's `Vary` names it, or the cache's policy allows by user agent) the recorded answer
/// keeps the value it was chosen for, and a replay checks it (``RecordedAnswer/selects(_:)``).
///
/// `Accept-Encoding` is not among them: responses vary on it more often than not, and each
/// browser sends the same value for every request.
enum ClientSpecificFields {
    /// The fields, lowercase.
    static let names: [String] = [
        "user-agent", "cookie", "referer", "accept", "accept-language", "origin", "dnt", "priority",
        "upgrade-insecure-requests", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest", "sec-fetch-user",
        "sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform", "x-request-id", "x-correlation-id", "traceparent",
        "tracestate",
    ]

    /// The names by length, for a check that compares only names of the right size.
    private static let byLength: [[[UInt8]]] = {
        var table = [[[UInt8]]](repeating: [], count: names.map(\.utf8.count).max()! + 1)
        for name in names { table[name.utf8.count].append(Array(name.utf8)) }
        return table
    }()

    /// Whether `name` (any case) is one of the fields.
    static func contains(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { contains(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Whether the bytes of a field name (any case) are one of the fields.
    static func contains(bytes name: UnsafeRawBufferPointer) -> Bool {
        let count = name.count
        guard count < byLength.count else { return false }
        let candidates = byLength[count]
        guard !candidates.isEmpty else { return false }
        return candidates.contains { candidate in
            for index in 0..<count where HTTPBytes.lowercased(name[index]) != candidate[index] {
                return false
            }
            return true
        }
    }
}
