import HTTPWire

/// Checks of a request head that RFC 9112 makes a server's duty, before anything is routed.
enum RequestHeadChecks {
    /// Why the head's `Host` is unacceptable (RFC 9112 §3.2: a 400 for an HTTP/1.1 request
    /// without one, for more than one, and for an invalid value); `nil` when it is fine.
    static func hostProblem(_ head: RequestHead) -> String? {
        guard head.hostFieldCount <= 1 else { return "the request has \(head.hostFieldCount) Host fields" }
        guard let host = head.host else {
            return head.version.minor >= 1 ? "an HTTP/1.1 request needs a Host field" : nil
        }
        return isAuthority(host) ? nil : "the Host field is not a valid host[:port]"
    }

    /// `uri-host [ ":" port ]` (RFC 9110 §7.2, RFC 3986 §3.2.2): a bracketed IP literal, or
    /// reg-name characters (which also cover IPv4), then optional port digits; no userinfo.
    /// Checked byte by byte: every request goes through it.
    static func isAuthority(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            var index = 0
            if bytes.first == UInt8(ascii: "[") {
                index = 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "]") {
                    guard
                        isHexDigit(bytes[index]) || bytes[index] == UInt8(ascii: ":")
                            || bytes[index] == UInt8(ascii: ".")
                    else { return false }
                    index += 1
                }
                guard index < bytes.count, index > 1 else { return false }
                index += 1
            } else {
                while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
                    guard isRegNameByte(bytes[index]) else { return false }
                    index += 1
                }
            }
            guard index < bytes.count else { return true }
            guard bytes[index] == UInt8(ascii: ":") else { return false }
            let port = bytes[(index + 1)...]
            return !port.isEmpty && port.count <= 5
                && port.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    /// unreserved / pct-encoded (its `%`) / sub-delims.
    private static func isRegNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "!"),
            UInt8(ascii: "$"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "="), UInt8(ascii: "%"):
            true
        default: false
        }
    }
}
