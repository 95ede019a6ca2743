import HTTPTypes

/// Which header fields travel, which are stored, and which belong to one connection only.
public enum MessageFields {
    /// RFC 9110 §7.6.1: fields that describe one connection and never travel further.
    public static let hopByHop: Set<HTTPField.Name> = [
        .connection, .keepAlive, .proxyConnection, .te, .transferEncoding, .upgrade, .trailer,
    ]

    /// Fields a cache never stores (RFC 9111 §3.1): hop-by-hop fields and those aimed at one proxy.
    public static let neverStored: Set<HTTPField.Name> = hopByHop.union([
        .proxyAuthenticate, .proxyAuthenticationInfo, .proxyAuthorization,
    ])

    /// The field names listed in `Connection` (RFC 9110 §7.6.1), which are hop-by-hop too.
    public static func connectionListed(in fields: HTTPFields) -> Set<HTTPField.Name> {
        var names = Set<HTTPField.Name>()
        forEachNameListedInConnection(fields) { names.insert($0) }
        return names
    }

    /// Gathers a message's fields as they are read, leaving out those of its connection (RFC
    /// 9110 §7.6.1): ``fields()`` is what ``removingHopByHop(_:)`` would leave, without a copy to
    /// remove them from afterwards. Made for the loops that turn parsed heads into `HTTPFields`.
    public struct Gathering {
        private var kept = HTTPFields()
        private var connection = HTTPFields()

        /// Starts with room for `capacity` fields (grown one at a time, the list reallocates).
        public init(capacity: Int = 0) {
            kept.reserveCapacity(capacity)
        }

        /// Takes the next field of the message.
        public mutating func add(_ field: HTTPField) {
            if field.name == .connection { connection.append(field) }
            if !isHopByHop(field.name) { kept.append(field) }
        }

        /// The fields taken, without the connection's.
        public consuming func fields() -> HTTPFields {
            guard !connection.isEmpty, !connectionListsOnlyHopByHop(connection) else { return kept }
            // `Connection` names fields that would otherwise travel: they are the connection's too.
            return removingHopByHop(connection + kept)
        }
    }

    /// Whether every name `Connection` lists in `fields` is in ``hopByHop`` (`keep-alive`, the
    /// usual one): then removing the hop-by-hop fields removes every field it names too.
    private static func connectionListsOnlyHopByHop(_ fields: HTTPFields) -> Bool {
        var only = true
        forEachNameListedInConnection(fields) { name in
            if !isHopByHop(name) { only = false }
        }
        return only
    }

    /// Calls `body` with each name `Connection` lists, in order (usually one: `keep-alive` or
    /// `close`), scanning the values in place: no array of members, no array of names.
    private static func forEachNameListedInConnection(_ fields: HTTPFields, _ body: (HTTPField.Name) -> Void) {
        for field in fields where field.name == .connection {
            var rest = field.value[...]
            while !rest.isEmpty {
                let comma = rest.firstIndex(of: ",") ?? rest.endIndex
                let token = rest[..<comma].trimmingHTTPWhitespace()
                if !token.isEmpty, let name = commonConnectionOption(token) ?? HTTPField.Name(String(token)) {
                    body(name)
                }
                rest = comma == rest.endIndex ? rest[comma...] : rest[rest.index(after: comma)...]
            }
        }
    }

    /// The name of the options most messages list, `keep-alive` and `close`, in any case,
    /// without making a string for it.
    private static func commonConnectionOption(_ token: Substring) -> HTTPField.Name? {
        if token.equalsIgnoringASCIICase("keep-alive") { return .keepAlive }
        if token.equalsIgnoringASCIICase("close") { return closeOption }
        return nil
    }

    private static let closeOption = HTTPField.Name("close")!

    /// `fields` without hop-by-hop fields and without those listed in `Connection`, for
    /// forwarding a message (RFC 9110 §7.6.1).
    public static func removingHopByHop(_ fields: HTTPFields) -> HTTPFields {
        removing(where: isHopByHop, andConnectionListedFrom: fields)
    }

    /// `fields` without hop-by-hop fields and proxy-specific ones, for storage (RFC 9111 §3.1).
    public static func removingUnstorable(_ fields: HTTPFields) -> HTTPFields {
        removing(where: isNeverStored, andConnectionListedFrom: fields)
    }

    /// Whether `name` is in ``hopByHop``. Names are compared, not looked up in the set: a lookup
    /// hashes the name, and every field of every message forwarded or stored is asked about.
    public static func isHopByHop(_ name: HTTPField.Name) -> Bool {
        switch name.canonicalName {
        case "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "trailer": true
        default: false
        }
    }

    /// Whether `name` is in ``neverStored`` (compared as in ``isHopByHop(_:)``).
    public static func isNeverStored(_ name: HTTPField.Name) -> Bool {
        switch name.canonicalName {
        case "proxy-authenticate", "proxy-authentication-info", "proxy-authorization": true
        default: isHopByHop(name)
        }
    }

    /// `fields` without those `excluded` names (which include `Connection`) and those that
    /// `Connection` lists. Without any excluded field nothing is listed either, and `fields` come
    /// back as they are; otherwise the few names listed are compared one by one (browsers and
    /// servers send `Connection: keep-alive` with most messages) rather than merged into a set.
    private static func removing(
        where excluded: (HTTPField.Name) -> Bool, andConnectionListedFrom fields: HTTPFields
    ) -> HTTPFields {
        guard fields.contains(where: { excluded($0.name) }) else { return fields }
        // Only names that would otherwise stay are gathered: `keep-alive`, the usual one, is
        // hop-by-hop already, so the usual message gathers nothing.
        var listed: [HTTPField.Name] = []
        forEachNameListedInConnection(fields) { name in
            if !excluded(name) { listed.append(name) }
        }
        return fields.filtering { !excluded($0.name) && !listed.contains($0.name) }
    }
}

extension HTTPFields {
    /// The fields for which `isIncluded` returns true, in order.
    func filtering(_ isIncluded: (HTTPField) -> Bool) -> HTTPFields {
        var result = HTTPFields()
        result.reserveCapacity(count)
        for field in self where isIncluded(field) { result.append(field) }
        return result
    }

    /// The values of `name` split into list members (RFC 9110 §5.6.1), trimmed, empty ones skipped.
    func listMembers(_ name: HTTPField.Name) -> [Substring] {
        self[values: name].flatMap { value in
            value.split(separator: ",").map { $0.trimmingHTTPWhitespace() }.filter { !$0.isEmpty }
        }
    }
}
