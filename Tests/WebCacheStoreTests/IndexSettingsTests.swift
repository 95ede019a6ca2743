import GRDB
import Testing
import WebCacheTestSupport

@testable import WebCacheStore

/// The settings every connection to the index is opened with.
@Suite("Index connection settings")
struct IndexSettingsTests {
    @Test(
        "WAL with synchronous NORMAL, temporary tables in memory, and deleted bytes zeroed only where that costs no writes"
    )
    func settings() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let read = { (db: Database) -> [String: String] in
                var values: [String: String] = [:]
                for name in ["journal_mode", "synchronous", "temp_store", "secure_delete"] {
                    values[name] = try String.fetchOne(db, sql: "PRAGMA \(name)")
                }
                return values
            }
            let expected = ["journal_mode": "wal", "synchronous": "1", "temp_store": "2", "secure_delete": "2"]
            #expect(try store.pool.write(read) == expected, "the writer")
            #expect(try store.pool.read(read) == expected, "a reader")
        }
    }
}
