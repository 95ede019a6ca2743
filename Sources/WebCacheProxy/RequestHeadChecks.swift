import NIOHTTP1

/// Checks of a request head that RFC 9112 makes a server's duty, before anything is routed.
enum RequestHeadChecks {
    /// Why the head's `Host` is unacceptable (RFC 9112 §3.2: a 400 for an HTTP/1.1 request
    /// without one, for more than one, and for an invalid value); `nil` when it is fine.
    static func hostProblem(_ head: HTTPRequestHead) -> String? {
        let hosts = head.headers["Host"]
        guard hosts.count <= 1 else { return "the request has \(hosts.count) Host fields" }
        guard let host = hosts.first else {
            return head.version.major == 1 && head.version.minor >= 1 ? "an HTTP/1.1 request needs a Host field" : nil
        }
        return isAuthority(host) ? nil : "the Host field is not a valid host[:port]"
    }

    /// `uri-host [ ":" port ]` (RFC 9110 §7.2, RFC 3986 §3.2.2): a bracketed IP literal, or
    /// reg-name characters (which also cover IPv4), then optional port digits; no userinfo.
    static func isAuthority(_ value: String) -> Bool {
        var host = Substring(value)
        var port: Substring = ""
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            let literal = host[host.index(after: host.startIndex)..<close]
            guard !literal.isEmpty, literal.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return false }
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return false }
            port = rest.dropFirst()
            host = ""
        } else if let colon = host.lastIndex(of: ":") {
            port = host[host.index(after: colon)...]
            host = host[..<colon]
            guard !port.isEmpty else { return false }
        }
        guard port.allSatisfy({ $0.isASCII && $0.isNumber }), port.count <= 5 else { return false }
        return host.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-._~!$&'()*+,;=%".unicodeScalars.contains(scalar))
        }
    }

    /// Whether the client waits for `100 Continue` before sending its body (RFC 9110 §10.1.1).
    static func expectsContinue(_ head: HTTPRequestHead) -> Bool {
        head.version.major == 1 && head.version.minor >= 1
            && head.headers["Expect"].contains { value in
                value.lowercased().split(separator: ",").contains { $0.filter { $0 != " " && $0 != "\t" } == "100-continue" }
            }
    }

    /// Whether the request asks to switch to WebSocket (RFC 6455 §4.1): a GET with
    /// `Upgrade: websocket` and `Connection: upgrade`.
    static func isWebSocketUpgrade(_ head: HTTPRequestHead) -> Bool {
        head.method == .GET
            && head.headers["Upgrade"].contains { $0.lowercased().contains("websocket") }
            && head.headers["Connection"].contains { $0.lowercased().split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "upgrade" } }
    }

    /// The `Content-Length` the head declares, when it is one valid number.
    static func declaredLength(_ head: HTTPRequestHead) -> Int? {
        let values = head.headers["Content-Length"]
        guard values.count == 1 else { return nil }
        return Int(values[0])
    }
}
