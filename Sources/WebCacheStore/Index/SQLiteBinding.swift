import GRDBSQLite

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Values bound to a prepared statement straight through SQLite's C interface, for the two
/// statements every miss runs (``EntryLookup``'s query and the index writer's insert).
///
/// GRDB's arguments build an array of `DatabaseValue` for each execution, and a `String` passed
/// where C wants a `const char *` is copied into a new null-terminated array whenever it is
/// not a heap string already ending in a zero (short strings such as a method, a host or an
/// empty variant key): about 15 allocations for a stored row. Text is bound here from its UTF-8
/// bytes with an explicit length, which a short string provides from the stack; SQLite copies
/// the bytes (`SQLITE_TRANSIENT`), so nothing need outlive the call.
enum SQLiteBinding {
    /// SQLite's `SQLITE_TRANSIENT`: it copies the value before the bind returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Binds text, or NULL for `nil`. A value over SQLite's length limit fails with
    /// `SQLITE_TOOBIG` (the 64-bit call takes any length, so nothing is cut short).
    static func bind(_ text: String?, at index: Int32, in statement: OpaquePointer) throws(SQLiteFailure) {
        guard var text else { return try check(sqlite3_bind_null(statement, index), index, statement) }
        let bound = text.withUTF8 { bytes in
            // An empty buffer may have no address, and SQLite reads a null pointer as NULL, not "".
            let start = UnsafeRawPointer(bytes.baseAddress ?? ("" as StaticString).utf8Start)
            return sqlite3_bind_text64(
                statement, index, start.assumingMemoryBound(to: CChar.self), UInt64(bytes.count), transient,
                UInt8(SQLITE_UTF8))
        }
        try check(bound, index, statement)
    }

    static func bind(_ value: Int64, at index: Int32, in statement: OpaquePointer) throws(SQLiteFailure) {
        try check(sqlite3_bind_int64(statement, index, value), index, statement)
    }

    /// Binds a double, or NULL for `nil`.
    static func bind(_ value: Double?, at index: Int32, in statement: OpaquePointer) throws(SQLiteFailure) {
        guard let value else { return try check(sqlite3_bind_null(statement, index), index, statement) }
        try check(sqlite3_bind_double(statement, index, value), index, statement)
    }

    /// Binds a blob (a zero-length one for empty data, never NULL), or NULL for `nil`.
    static func bind(_ data: Data?, at index: Int32, in statement: OpaquePointer) throws(SQLiteFailure) {
        guard let data else { return try check(sqlite3_bind_null(statement, index), index, statement) }
        let bound = data.withUnsafeBytes { bytes in
            guard let start = bytes.baseAddress, !bytes.isEmpty else {
                return sqlite3_bind_zeroblob(statement, index, 0)
            }
            return sqlite3_bind_blob64(statement, index, start, UInt64(bytes.count), transient)
        }
        try check(bound, index, statement)
    }

    /// Makes `statement` ready for its next use and lets go of the values bound to it.
    static func reset(_ statement: OpaquePointer) {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    private static func check(_ result: Int32, _ index: Int32, _ statement: OpaquePointer) throws(SQLiteFailure) {
        guard result != SQLITE_OK else { return }
        throw SQLiteFailure(code: result, handle: sqlite3_db_handle(statement), doing: "bind parameter \(index)")
    }
}

/// Columns of the row a statement is on, read straight through SQLite's C interface (the
/// counterpart of ``SQLiteBinding``); text and blobs are copied out, as SQLite's pointers last
/// only until the next step.
enum SQLiteColumn {
    static func isNull(_ statement: OpaquePointer, _ column: Int32) -> Bool {
        sqlite3_column_type(statement, column) == SQLITE_NULL
    }

    static func text(_ statement: OpaquePointer, _ column: Int32) -> String? {
        guard !isNull(statement, column), let start = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    }

    static func blob(_ statement: OpaquePointer, _ column: Int32) -> Data? {
        guard !isNull(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let start = sqlite3_column_blob(statement, column) else { return Data() }
        return Data(bytes: start, count: count)
    }

    static func double(_ statement: OpaquePointer, _ column: Int32) -> Double? {
        isNull(statement, column) ? nil : sqlite3_column_double(statement, column)
    }
}
