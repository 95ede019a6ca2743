import HTTPTypes

/// The compact text form of header fields in the index: `Name: value` lines joined by CR LF,
/// the way they travel in HTTP/1.1 (field values can hold neither CR nor LF).
enum HeaderCoding {
    static func encode(_ fields: HTTPFields) -> String {
        var text = ""
        for field in fields {
            if !text.isEmpty { text += "\r\n" }
            text += field.name.rawName
            text += ": "
            text += field.value
        }
        return text
    }

    /// Decodes fields, or returns `nil` when the text is not in the stored form.
    static func decode(_ text: String) -> HTTPFields? {
        var fields = HTTPFields()
        guard !text.isEmpty else { return fields }
        for line in text.split(separator: "\r\n", omittingEmptySubsequences: false) {
            guard let colon = line.firstIndex(of: ":"), let name = HTTPField.Name(String(line[..<colon])) else {
                return nil
            }
            var value = line[line.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
            fields.append(HTTPField(name: name, value: String(value)))
        }
        return fields
    }
}
