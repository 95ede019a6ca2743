/// The byte classes of HTTP/1.1's grammar (RFC 9110 §5.6, RFC 9112), as table lookups: every
/// byte of every request head goes through them.
package enum HTTPBytes {
    package static let carriageReturn = UInt8(ascii: "\r")
    package static let lineFeed = UInt8(ascii: "\n")
    package static let space = UInt8(ascii: " ")
    package static let tab = UInt8(ascii: "\t")
    package static let colon = UInt8(ascii: ":")
    package static let comma = UInt8(ascii: ",")
    package static let semicolon = UInt8(ascii: ";")

    /// `tchar` (RFC 9110 §5.6.2): what tokens — methods, field names — are made of. A bit test
    /// against two constant masks: every byte of every field name goes through it.
    @inline(__always)
    package static func isTokenCharacter(_ byte: UInt8) -> Bool {
        if byte < 64 { return (0x03FF_6CFA_0000_0000 as UInt64) >> byte & 1 != 0 }
        if byte < 128 { return (0x57FF_FFFF_C7FF_FFFE as UInt64) >> (byte &- 64) & 1 != 0 }
        return false
    }

    /// What a field value may hold (RFC 9110 §5.5): visible characters, `obs-text`, space and
    /// tab; no other control character.
    @inline(__always)
    package static func isFieldValueByte(_ byte: UInt8) -> Bool {
        (byte > 0x1F && byte != 0x7F) || byte == tab
    }

    /// What a request target may hold: visible ASCII (RFC 3986 characters and the few others
    /// clients send unencoded); no space, no control character, nothing past ASCII.
    @inline(__always)
    package static func isTargetByte(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F
    }

    /// Whether a byte is optional whitespace (`OWS`: space or tab).
    @inline(__always)
    package static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == space || byte == tab
    }

    /// The value of a hexadecimal digit, or `nil`.
    @inline(__always)
    package static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// Whether a byte is an ASCII digit.
    @inline(__always)
    package static func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    /// A byte with ASCII letters folded to lowercase.
    @inline(__always)
    package static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
    }
}
