extension StringProtocol {
    /// Whether these are the bytes of `lowercase` in any ASCII case, compared byte by byte
    /// without making a lower-cased copy (for names and tokens every message carries). Letters
    /// of `lowercase`, which is written in lower case, match either case (setting the 0x20 bit
    /// maps exactly a letter's two cases onto the lower one); every other byte matches only
    /// itself. Inlinable, so that it is specialised for `String` and `Substring` where it is used.
    @inlinable
    package func equalsIgnoringASCIICase(_ lowercase: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        return utf8.count == expected.count
            && utf8.elementsEqual(expected) { byte, wanted in
                byte == wanted || (wanted >= UInt8(ascii: "a") && wanted <= UInt8(ascii: "z") && byte | 0x20 == wanted)
            }
    }
}
