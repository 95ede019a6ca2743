import Foundation

/// Reads HTTP/1.1 responses out of the bytes a server wrote, framed as RFC 9112 §6.3 says: no
/// body for 1xx, 204, 304 and answers to `HEAD`; a chunked body; `Content-Length`; else up to
/// the close. Strict: a test that reads an answer this cannot frame has found a framing bug.
public struct ResponseReader {
    /// One response as read.
    public struct Response: Equatable, Sendable {
        /// The status code.
        public var status: Int
        /// The header fields in order, names as sent.
        public var fields: [(name: String, value: String)]
        /// The body, de-chunked.
        public var body: [UInt8]

        /// The first value of the field `name` (case-insensitive).
        public func field(_ name: String) -> String? {
            fields.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// The body as text.
        public var text: String { String(decoding: body, as: UTF8.self) }

        /// Equal status, fields in order, and body.
        public static func == (lhs: Response, rhs: Response) -> Bool {
            lhs.status == rhs.status && lhs.body == rhs.body
                && lhs.fields.map { "\($0.name): \($0.value)" } == rhs.fields.map { "\($0.name): \($0.value)" }
        }
    }

    /// Why bytes could not be read as responses.
    public struct Malformed: Error, CustomStringConvertible {
        /// What was wrong, and where.
        public var description: String
    }

    /// What `bytes` hold: the whole responses, and whether bytes of one more are left over.
    ///
    /// `methods` are the methods of the requests answered, in order (a final response takes the
    /// next one; `HEAD` answers have no body); `closed` says the server closed the connection
    /// after these bytes, which ends a body without a length.
    public static func read(_ bytes: [UInt8], methods: [String] = [], closed: Bool = false) throws -> (
        responses: [Response], incomplete: Bool
    ) {
        var responses: [Response] = []
        var position = 0
        var finals = 0
        while position < bytes.count {
            guard let headEnd = find([13, 10, 13, 10], in: bytes, from: position) else { return (responses, true) }
            let lines = String(decoding: bytes[position..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
            let statusLine = lines[0].split(separator: " ", maxSplits: 2)
            guard statusLine.count >= 2, statusLine[0] == "HTTP/1.1" || statusLine[0] == "HTTP/1.0",
                let status = Int(statusLine[1]),
                (100...599).contains(status), statusLine[1].count == 3
            else { throw Malformed(description: "not a status line at byte \(position): \(lines[0].prefix(80))") }
            var fields: [(name: String, value: String)] = []
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                    throw Malformed(
                        description: "not a field line in the \(status) at byte \(position): \(line.prefix(80))")
                }
                fields.append(
                    (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
            var response = Response(status: status, fields: fields, body: [])
            position = headEnd + 4
            let method = status >= 200 && finals < methods.count ? methods[finals] : "GET"
            if status >= 200 { finals += 1 }
            if status < 200 || status == 204 || status == 304 || method == "HEAD"
                || (method == "CONNECT" && status < 300)
            {
                responses.append(response)
                continue
            }
            if response.field("Transfer-Encoding")?.lowercased().contains("chunked") == true {
                while true {
                    guard let sizeEnd = find([13, 10], in: bytes, from: position) else { return (responses, true) }
                    let sizeText = String(decoding: bytes[position..<sizeEnd], as: UTF8.self).split(separator: ";")[0]
                    guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else {
                        throw Malformed(description: "bad chunk size '\(sizeText)' in the \(status)")
                    }
                    position = sizeEnd + 2
                    if size == 0 {
                        guard let trailerEnd = find([13, 10], in: bytes, from: position) else {
                            return (responses, true)
                        }
                        guard trailerEnd == position else {
                            throw Malformed(description: "trailers after a chunked \(status)")
                        }
                        position += 2
                        break
                    }
                    guard position + size + 2 <= bytes.count else { return (responses, true) }
                    response.body += bytes[position..<(position + size)]
                    guard bytes[position + size] == 13, bytes[position + size + 1] == 10 else {
                        throw Malformed(description: "a chunk of the \(status) not ended by CRLF")
                    }
                    position += size + 2
                }
            } else if let lengthText = response.field("Content-Length") {
                guard let length = Int(lengthText), length >= 0 else {
                    throw Malformed(description: "Content-Length '\(lengthText)'")
                }
                guard position + length <= bytes.count else { return (responses, true) }
                response.body = Array(bytes[position..<(position + length)])
                position += length
            } else {
                guard closed else { return (responses, true) }
                response.body = Array(bytes[position...])
                position = bytes.count
            }
            responses.append(response)
        }
        return (responses, false)
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        for index in start...(bytes.count - needle.count) where bytes[index] == needle[0] {
            if bytes[index..<(index + needle.count)].elementsEqual(needle) { return index }
        }
        return nil
    }
}
