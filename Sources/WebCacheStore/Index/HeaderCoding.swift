import HTTPTypes

/// The compact text form of header fields in the index: `Name: value` lines joined by CR LF,
/// the way they travel in HTTP/1.1 (field values can hold neither CR nor LF).
enum HeaderCoding {
    static func encode(_ fields: HTTPFields) -> String {
        var text = ""
        // Room for all of it at once, not grown line by line.
        text.reserveCapacity(fields.reduce(0) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count + 4 })
        for field in fields {
            if !text.isEmpty { text += "\r\n" }
            text += field.name.rawName
            text += ": "
            text += field.value
        }
        return text
    }

    /// Decodes fields, or returns `nil` when the text is not in the stored form. Scans bytes:
    /// this runs on every disk hit.
    static func decode(_ text: String) -> HTTPFields? {
        var text = text
        return text.withUTF8 { bytes -> HTTPFields? in
            var fields = HTTPFields()
            guard !bytes.isEmpty else { return fields }
            // Room for every line at once, not grown field by field; HTTPFields traps at 65,535.
            let lines = bytes.reduce(1) { $1 == 0x0D ? $0 + 1 : $0 }
            guard lines < Int(UInt16.max) else { return nil }
            fields.reserveCapacity(lines)
            var lineStart = 0
            while lineStart <= bytes.count {
                var lineEnd = lineStart
                while lineEnd < bytes.count && bytes[lineEnd] != 0x0D { lineEnd += 1 }
                guard let field = decodeLine(UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd])) else {
                    return nil
                }
                fields.append(field)
                guard lineEnd < bytes.count else { break }
                guard lineEnd + 1 < bytes.count, bytes[lineEnd + 1] == 0x0A else { return nil }
                lineStart = lineEnd + 2
            }
            return fields
        }
    }

    private static func decodeLine(_ line: UnsafeBufferPointer<UInt8>) -> HTTPField? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")),
            let name = HTTPField.Name(String(decoding: UnsafeBufferPointer(rebasing: line[..<colon]), as: UTF8.self))
        else { return nil }
        var valueStart = colon + 1
        if valueStart < line.count && line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        return HTTPField(
            name: name, value: String(decoding: UnsafeBufferPointer(rebasing: line[valueStart...]), as: UTF8.self))
    }
}
