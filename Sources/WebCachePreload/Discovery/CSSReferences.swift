/// A URL a stylesheet refers to, as written (not yet resolved).
public struct CSSReference: Sendable, Hashable {
    /// The URL as written, escapes decoded.
    public var url: String
    /// Whether it is an `@import` (a stylesheet) rather than a resource (`url(…)`,
    /// `image-set("…")`: images, fonts).
    public var isImport: Bool

    /// Creates a reference.
    public init(url: String, isImport: Bool) {
        self.url = url
        self.isImport = isImport
    }
}

/// Finds the URLs in CSS: `url(…)` (quoted, unquoted, escaped), `@import "…"` and
/// `@import url(…)`, and the strings of `image-set(…)`; comments are skipped. A tolerant scanner
/// in the spirit of CSS Syntax Level 3's tokenizer: broken CSS still yields its references.
public enum CSSReferences {
    /// The references in `css`, in order.
    public static func scan(_ css: String) -> [CSSReference] {
        var scanner = Scanner(Array(css.unicodeScalars))
        return scanner.run()
    }

    private struct Scanner {
        let text: [Unicode.Scalar]
        var index = 0
        var found: [CSSReference] = []
        var importPending = false
        var parenthesisDepth = 0
        var imageSetDepth: Int?

        init(_ text: [Unicode.Scalar]) {
            self.text = text
        }

        mutating func run() -> [CSSReference] {
            while index < text.count {
                let scalar = text[index]
                switch scalar {
                case "/" where peek(1) == "*":
                    skipComment()
                case "\"", "'":
                    let string = readString(quote: scalar)
                    if importPending {
                        add(string, isImport: true)
                        importPending = false
                    } else if imageSetDepth != nil {
                        add(string, isImport: false)
                    }
                case "@":
                    index += 1
                    importPending = readIdentifier().lowercased() == "import"
                case ";", "{", "}":
                    importPending = false
                    index += 1
                case "(":
                    parenthesisDepth += 1
                    index += 1
                case ")":
                    if imageSetDepth == parenthesisDepth { imageSetDepth = nil }
                    parenthesisDepth = max(0, parenthesisDepth - 1)
                    index += 1
                default:
                    if Self.startsIdentifier(scalar) || (scalar == "\\" && peek(1) != "\n") {
                        readFunctionOrIdentifier()
                    } else {
                        index += 1
                    }
                }
            }
            return found
        }

        private mutating func readFunctionOrIdentifier() {
            let name = readIdentifier().lowercased()
            guard peek(0) == "(" else { return }
            index += 1
            parenthesisDepth += 1
            switch name {
            case "url":
                if let url = readURLContents() {
                    add(url, isImport: importPending)
                    importPending = false
                }
                parenthesisDepth -= 1
            case "image-set", "-webkit-image-set":
                imageSetDepth = parenthesisDepth
            default:
                break
            }
        }

        /// After `url(`: a quoted or unquoted URL up to the closing parenthesis.
        private mutating func readURLContents() -> String? {
            skipWhitespace()
            if let quote = peek(0), quote == "\"" || quote == "'" {
                let string = readString(quote: quote)
                while index < text.count && text[index] != ")" { index += 1 }
                index += 1
                return string
            }
            var url = String.UnicodeScalarView()
            while index < text.count {
                let scalar = text[index]
                if scalar == ")" {
                    index += 1
                    break
                }
                if scalar == "\\" {
                    if let escaped = readEscape() { url.append(escaped) }
                    continue
                }
                if !CSSReferences.isSpace(scalar) { url.append(scalar) }
                index += 1
            }
            return String(url)
        }

        private mutating func readString(quote: Unicode.Scalar) -> String {
            index += 1
            var string = String.UnicodeScalarView()
            while index < text.count {
                let scalar = text[index]
                if scalar == quote {
                    index += 1
                    break
                }
                if scalar == "\n" { break }  // an unterminated string ends at the line
                if scalar == "\\" {
                    if peek(1) == "\n" {
                        index += 2
                        continue
                    }
                    if let escaped = readEscape() { string.append(escaped) }
                    continue
                }
                string.append(scalar)
                index += 1
            }
            return String(string)
        }

        /// At a backslash: the escaped code point (CSS Syntax §4.3.7), index moved past it.
        private mutating func readEscape() -> Unicode.Scalar? {
            index += 1
            guard index < text.count else { return nil }
            var hex = ""
            while hex.count < 6, index < text.count, text[index].properties.isASCIIHexDigit {
                hex.unicodeScalars.append(text[index])
                index += 1
            }
            if hex.isEmpty {
                defer { index += 1 }
                return text[index]
            }
            if index < text.count, CSSReferences.isSpace(text[index]) { index += 1 }
            let value = UInt32(hex, radix: 16) ?? 0xFFFD
            return Unicode.Scalar(value == 0 ? 0xFFFD : value) ?? "\u{FFFD}"
        }

        private mutating func readIdentifier() -> String {
            var name = String.UnicodeScalarView()
            while index < text.count {
                let scalar = text[index]
                if scalar == "\\" {
                    if let escaped = readEscape() { name.append(escaped) }
                } else if Self.continuesIdentifier(scalar) {
                    name.append(scalar)
                    index += 1
                } else {
                    break
                }
            }
            return String(name)
        }

        private mutating func skipComment() {
            index += 2
            while index < text.count && !(text[index] == "*" && peek(1) == "/") { index += 1 }
            index += 2
        }

        private mutating func skipWhitespace() {
            while index < text.count && CSSReferences.isSpace(text[index]) { index += 1 }
        }

        private func peek(_ offset: Int) -> Unicode.Scalar? {
            index + offset < text.count ? text[index + offset] : nil
        }

        private mutating func add(_ url: String, isImport: Bool) {
            let trimmed = url.trimmingWhitespace()
            if !trimmed.isEmpty { found.append(CSSReference(url: trimmed, isImport: isImport)) }
        }

        static func startsIdentifier(_ scalar: Unicode.Scalar) -> Bool {
            scalar.properties.isAlphabetic || scalar == "_" || scalar == "-" || scalar.value >= 0x80
        }

        static func continuesIdentifier(_ scalar: Unicode.Scalar) -> Bool {
            startsIdentifier(scalar) || ("0"..."9").contains(scalar)
        }
    }
}

extension String {
    /// Without leading and trailing ASCII whitespace.
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !CSSReferences.isSpace($0) }),
            let end = scalars.lastIndex(where: { !CSSReferences.isSpace($0) })
        else { return "" }
        return String(scalars[start...end])
    }
}

extension CSSReferences {
    static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" || scalar == "\u{0C}"
    }
}
