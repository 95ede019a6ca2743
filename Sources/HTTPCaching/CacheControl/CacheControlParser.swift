/// Splits `Cache-Control` field values into directives (RFC 9111 §5.2), tolerating garbage.
///
/// Commas inside quoted strings do not split directives (`extension="max-age=3600, x"` is one
/// directive); empty list elements are skipped (RFC 9110 §5.6.1); a malformed element becomes a
/// directive with ``CacheDirective/isWellFormed`` false instead of being dropped, so that the
/// caller can read it conservatively.
///
/// A single ASCII value of up to ``memoCapacity`` bytes is parsed once: responses and requests
/// repeat a handful of values (`max-age=3600`, `no-cache`, `public, max-age=31536000, immutable`),
/// and a miss reads its response's directives several times (storability, freshness, reuse).
enum CacheControlParser {
    /// Recently parsed single values; emptied when ``memoCapacity`` values are held.
    private static let memo = Locked(BoundedTable<String, [CacheDirective]>(capacity: memoCapacity))
    static let memoCapacity = 256
    /// The longest value kept in the memo.
    static let memoizedLength = 256

    static func parse(_ values: [String]) -> [CacheDirective] {
        guard values.count == 1, let value = values.first else { return parseAll(values) }
        return parse(line: value)
    }

    /// The directives of one field line.
    static func parse(line value: String) -> [CacheDirective] {
        // ASCII only: there, equal strings are equal bytes (Swift compares others by canonical
        // equivalence, which could hand one spelling the parse of another).
        guard value.utf8.count <= memoizedLength, value.utf8.allSatisfy({ $0 < 0x80 }) else {
            return parseAll([value])
        }
        if let known = memo.withLock({ $0[value] }) { return known }
        let parsed = parseAll([value])
        memo.withLock { $0[value] = parsed }
        return parsed
    }

    static func parseAll(_ values: [String]) -> [CacheDirective] {
        var directives: [CacheDirective] = []
        for value in values {
            for element in splitList(value) {
                if let directive = parseElement(element) {
                    directives.append(directive)
                }
            }
        }
        return directives
    }

    /// Splits a comma-separated list, keeping quoted strings (with backslash escapes) intact.
    /// Read as bytes, as HTTP defines it (RFC 9110 §5.6.1): a comma or quote is one byte, and a
    /// mark combining with it is not part of it.
    static func splitList(_ value: String) -> [Substring] {
        var elements: [Substring] = []
        let bytes = value.utf8
        var start = bytes.startIndex
        var index = bytes.startIndex
        var inQuotes = false
        while index < bytes.endIndex {
            let byte = bytes[index]
            if inQuotes {
                if byte == UInt8(ascii: "\\") {
                    // The escaped byte is skipped; a multi-byte character's other bytes are
                    // never a quote, a backslash or a comma.
                    index = bytes.index(after: index)
                    if index == bytes.endIndex { break }
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inQuotes = true
            } else if byte == UInt8(ascii: ",") {
                elements.append(value[start..<index])
                start = bytes.index(after: index)
            }
            index = bytes.index(after: index)
        }
        elements.append(value[start..<value.endIndex])
        return elements
    }

    static func parseElement(_ raw: Substring) -> CacheDirective? {
        let element = raw.trimmingHTTPWhitespace()
        guard !element.isEmpty else { return nil }
        guard let equals = element.firstIndex(of: "=") else {
            return CacheDirective(name: String(element), isWellFormed: element.allSatisfy(\.isHTTPTokenCharacter))
        }
        let name = element[element.startIndex..<equals]
        let rawArgument = element[element.index(after: equals)...]
        let nameIsToken = !name.isEmpty && name.allSatisfy(\.isHTTPTokenCharacter)
        if rawArgument.first == "\"" {
            let (text, closed, trailing) = unquote(rawArgument)
            return CacheDirective(
                name: String(name), argument: text, isQuoted: true,
                isWellFormed: nameIsToken && closed && trailing.isEmpty)
        }
        let argumentIsToken = !rawArgument.isEmpty && rawArgument.allSatisfy(\.isHTTPTokenCharacter)
        return CacheDirective(
            name: String(name), argument: String(rawArgument), isQuoted: false,
            isWellFormed: nameIsToken && argumentIsToken)
    }

    /// RFC 9110 §5.6.4 quoted-string: returns the text, whether the closing quote was found, and
    /// whatever followed it.
    static func unquote(_ quoted: Substring) -> (String, closed: Bool, trailing: Substring) {
        var text = ""
        var index = quoted.index(after: quoted.startIndex)
        while index < quoted.endIndex {
            let character = quoted[index]
            if character == "\\" {
                index = quoted.index(after: index)
                guard index < quoted.endIndex else { break }
                text.append(quoted[index])
            } else if character == "\"" {
                return (text, true, quoted[quoted.index(after: index)...])
            } else {
                text.append(character)
            }
            index = quoted.index(after: index)
        }
        return (text, false, quoted[quoted.endIndex...])
    }
}

extension StringProtocol {
    /// Removes RFC 9110 §5.6.3 optional whitespace (SP / HTAB) at both ends (bytes, not
    /// characters: a space followed by a combining mark is still whitespace).
    func trimmingHTTPWhitespace() -> SubSequence {
        let range = utf8.httpWhitespaceTrimmed()
        return self[range]
    }
}

extension Collection where Element == UInt8 {
    /// The indices of these bytes without RFC 9110 §5.6.3 optional whitespace (SP / HTAB) at
    /// either end, found walking forward only (a string's bytes need not walk back).
    func httpWhitespaceTrimmed() -> Range<Index> {
        var start = startIndex
        while start < endIndex, self[start] == UInt8(ascii: " ") || self[start] == UInt8(ascii: "\t") {
            start = index(after: start)
        }
        var end = start
        var index = start
        while index < endIndex {
            let byte = self[index]
            index = self.index(after: index)
            if byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") { end = index }
        }
        return start..<end
    }
}
