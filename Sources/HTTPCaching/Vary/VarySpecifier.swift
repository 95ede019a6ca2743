import HTTPTypes

/// What a response's `Vary` field says about its secondary cache key (RFC 9111 §4.1).
///
/// All `Vary` lines are combined; names are case-insensitive; empty members are ignored; a `*`
/// anywhere (`*`, `*, *`, `, *`, `Foo, *`) means the response matches no later request.
public enum VarySpecifier: Sendable, Hashable {
    /// No `Vary`: the response matches every request for its URL.
    case none
    /// `Vary: *`: the response never matches.
    case any
    /// The request fields that select this response, in first-seen order, without duplicates.
    case fields([HTTPField.Name])

    /// Reads the `Vary` lines of a response.
    public init(_ fields: HTTPFields) {
        var names: [HTTPField.Name] = []
        for member in fields.listMembers(.vary) {
            if member == "*" {
                self = .any
                return
            }
            if let name = HTTPField.Name(String(member)), !names.contains(name) {
                names.append(name)
            }
        }
        self = names.isEmpty ? .none : .fields(names)
    }

    /// The field names, empty for ``none`` and ``any``.
    public var names: [HTTPField.Name] {
        if case .fields(let names) = self { return names }
        return []
    }
}

/// The secondary cache key of a request: the normalised values of the fields a response varies
/// on (RFC 9111 §4.1). Two requests select the same variant when their keys are equal.
///
/// Normalisation: all lines of a field are combined, list members are trimmed and re-joined with
/// `,`, and for the content-negotiation fields (`Accept*`), compared without regard to case;
/// `Accept-Language` members are also put in order of preference (by `q`, then alphabetically),
/// since languages of equal weight are listed in no meaningful order. A field that is absent
/// differs from a field that is present but empty.
public struct VaryKey: Sendable, Hashable, CustomStringConvertible {
    /// The key as text, one `name: value` line per field; empty when the response does not vary.
    public var text: String

    /// The key of `request` for the fields in `specifier`.
    public init(_ specifier: VarySpecifier, request: HTTPFields) {
        text = specifier.names.map { name in
            "\(name.canonicalName.lowercased()):\(Self.normalizedValue(of: name, in: request) ?? "\u{0}absent")"
        }.joined(separator: "\n")
    }

    /// The key text.
    public var description: String { text }

    static let caseInsensitiveFields: Set<HTTPField.Name> = [
        .accept, .acceptEncoding, .acceptLanguage, HTTPField.Name("Accept-Charset")!,
    ]

    static func normalizedValue(of name: HTTPField.Name, in fields: HTTPFields) -> String? {
        let values = fields[values: name]
        guard !values.isEmpty else { return nil }
        let members = values.joined(separator: ",")
            .split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingHTTPWhitespace() }
            .filter { !$0.isEmpty }
        if name == .acceptLanguage {
            return LanguagePreference.parse(members).map(\.normalized).joined(separator: ",")
        }
        let joined = members.joined(separator: ",")
        return caseInsensitiveFields.contains(name) ? joined.lowercased() : joined
    }
}
