import GRDB

extension CacheStore {
    /// Adds to named counters kept with the store (hits, misses…), so that figures survive the
    /// process: the engine adds what it counted, `webcache stats` reads the totals.
    public func addToCounters(_ increments: [String: Int]) throws {
        let nonZero = increments.filter { $0.value != 0 }
        guard !nonZero.isEmpty else { return }
        try database("update counters") {
            try pool.write { db in
                for (name, value) in nonZero {
                    try db.execute(
                        sql:
                            "INSERT INTO counter(namespace, name, value) VALUES (?, ?, ?) ON CONFLICT(namespace, name) DO UPDATE SET value = value + excluded.value",
                        arguments: [namespace, name, value])
                }
            }
        }
    }

    /// The counters kept with the store.
    public func counters() throws -> [String: Int] {
        try database("read counters") {
            try pool.read { db in
                try Row.fetchAll(db, sql: "SELECT name, value FROM counter WHERE namespace = ?", arguments: [namespace])
                    .reduce(into: [String: Int]()) {
                        $0[try $1.decode(String.self, forColumn: "name")] = try $1.decode(Int.self, forColumn: "value")
                    }
            }
        }
    }
}
