import HTTPTypes
import RawStructuredFieldValues

/// Targeted cache-control fields (RFC 9213), such as `CDN-Cache-Control`.
///
/// A cache configured with a target list reads the first listed field that holds a valid,
/// non-empty Structured Field Dictionary and then ignores `Cache-Control` and `Expires`
/// (RFC 9213 §2.2). A field that fails to parse, or whose known directives have the wrong type
/// (`max-age="10"`), is ignored as a whole.
public enum TargetedCacheControl {
    /// The name of the CDN-wide targeted field (RFC 9213 §3).
    public static let cdnCacheControl = HTTPField.Name("CDN-Cache-Control")!

    /// The first valid targeted field in `fields`, following `targets` in order.
    public static func select(
        from fields: HTTPFields, targets: [HTTPField.Name]
    ) -> (field: HTTPField.Name, cacheControl: CacheControl)? {
        for target in targets {
            let values = fields[values: target]
            guard !values.isEmpty else { continue }
            if let parsed = parse(values.joined(separator: ", ")), !parsed.isEmpty {
                return (target, parsed)
            }
        }
        return nil
    }

    /// Parses one targeted field value, or returns `nil` when it is not a valid dictionary.
    public static func parse(_ value: String) -> CacheControl? {
        var parser = StructuredFieldValueParser(Array(value.utf8))
        guard let dictionary = try? parser.parseDictionaryFieldValue() else { return nil }
        var directives: [CacheDirective] = []
        for (key, member) in dictionary {
            guard let directive = directive(named: key, member) else { return nil }
            directives.append(directive)
        }
        return CacheControl(directives: directives)
    }

    private static let integerDirectives: Set<String> = [
        "max-age", "s-maxage", "stale-while-revalidate", "stale-if-error",
    ]
    private static let fieldListDirectives: Set<String> = ["no-cache", "private"]

    private static func directive(named key: String, _ member: ItemOrInnerList) -> CacheDirective? {
        switch member {
        case .item(let item):
            switch item.rfc9651BareItem {
            case .bool(true):
                return integerDirectives.contains(key) ? nil : CacheDirective(name: key)
            case .bool(false):
                return integerDirectives.contains(key)
                    ? nil : CacheDirective(name: key, argument: "?0", isWellFormed: false)
            case .integer(let number):
                guard number >= 0 || !integerDirectives.contains(key) else { return nil }
                guard !fieldListDirectives.contains(key) else { return nil }
                return CacheDirective(name: key, argument: String(number))
            case .string(let text):
                guard !integerDirectives.contains(key) else { return nil }
                return CacheDirective(name: key, argument: text, isQuoted: true)
            case .token(let token):
                guard !integerDirectives.contains(key) else { return nil }
                return CacheDirective(name: key, argument: token)
            default:
                return integerDirectives.contains(key) || fieldListDirectives.contains(key)
                    ? nil : CacheDirective(name: key, argument: "", isWellFormed: false)
            }
        case .innerList(let list):
            guard fieldListDirectives.contains(key) else {
                return integerDirectives.contains(key)
                    ? nil : CacheDirective(name: key, argument: "", isWellFormed: false)
            }
            var names: [String] = []
            for item in list.bareInnerList {
                switch item.rfc9651BareItem {
                case .string(let name), .token(let name): names.append(name)
                default: return nil
                }
            }
            return CacheDirective(name: key, argument: names.joined(separator: ", "), isQuoted: true)
        }
    }
}
