import HTTPCaching

/// An error from the cache store: a stable ``code`` to match on, a message that says what went
/// wrong, and the underlying error when there is one.
public struct StoreError: CodedError {
    /// The codes of this error: static members of `ErrorCode` where `Domain` is this type, declared
    /// below. More may be added.
    public typealias Code = ErrorCode<StoreError>

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

extension StoreError {
    /// The index writer gave no result for a row (a writer that returned too few).
    static var missingWriterResult: StoreError {
        StoreError(.databaseFailure, "the index writer returned no result for an entry")
    }
}

extension ErrorCode where Domain == StoreError {
    /// Reading or writing a file failed (a full disk, a permission, a vanished file).
    public static var ioFailure: Self { Self("ioFailure") }
    /// A stored body does not match its index row (length or checksum); it was removed.
    public static var corruptBody: Self { Self("corruptBody") }
    /// The SQLite index failed.
    public static var databaseFailure: Self { Self("databaseFailure") }
    /// The configuration cannot work (a negative capacity, an unusable directory).
    public static var invalidConfiguration: Self { Self("invalidConfiguration") }
    /// The writer was already committed or cancelled.
    public static var closed: Self { Self("closed") }
    /// The entry was not stored: an entry for its URL was removed after its request was sent
    /// (see ``RemovalMark``).
    public static var removedMeanwhile: Self { Self("removedMeanwhile") }
    /// The entry was not stored: as many entries as the store allows were already waiting for
    /// the index (``CacheStore/Configuration/maximumEntriesOnTheirWay``), whose disk is slow or
    /// stuck. The response can still be served; storing works again once the index catches up.
    public static var indexBehind: Self { Self("indexBehind") }
}
