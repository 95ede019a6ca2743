import HTTPCaching

/// An error from the cache store: a stable ``code`` to match on, a message that says what went
/// wrong, and the underlying error when there is one.
public struct StoreError: CodedError {
    /// What kind of failure this is. New codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case ioFailure, corruptBody, databaseFailure, invalidConfiguration, closed
        }
        private let value: Value

        /// Reading or writing a file failed (a full disk, a permission, a vanished file).
        public static let ioFailure = Code(value: .ioFailure)
        /// A stored body does not match its index row (length or checksum); it was removed.
        public static let corruptBody = Code(value: .corruptBody)
        /// The SQLite index failed.
        public static let databaseFailure = Code(value: .databaseFailure)
        /// The configuration cannot work (a negative capacity, an unusable directory).
        public static let invalidConfiguration = Code(value: .invalidConfiguration)
        /// The writer was already committed or cancelled.
        public static let closed = Code(value: .closed)

        /// The code's name.
        public var description: String { "\(value)" }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong, for people.
    public var message: String
    /// The error that caused this one.
    public var cause: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }
}
