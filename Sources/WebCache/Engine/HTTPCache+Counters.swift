extension HTTPCache {
    /// Adds what was counted since the last call to the counters kept in the store, so that
    /// `webcache stats` can report them across processes. Call it now and then (the CLI calls
    /// it once per command).
    public func persistCounters() {
        let counted = countersBox.withLock { counters -> CacheCounters in
            defer { counters = CacheCounters() }
            return counters
        }
        do {
            try store.addToCounters(counted.dictionary)
        } catch {
            logger.warning("could not save cache counters: \(error)")
            countersBox.withLock { $0.add(counted) }
        }
    }
}

extension CacheCounters {
    /// The counters by name.
    public var dictionary: [String: Int] {
        [
            "requests": requests, "hits": hits, "misses": misses, "revalidations": revalidations,
            "staleServed": staleServed, "bypassed": bypassed, "blocked": blocked,
            "unreachableSkips": unreachableSkips, "networkTimeouts": networkTimeouts, "storeProblems": storeProblems,
            "bytesFromCache": bytesFromCache, "bytesFromOrigin": bytesFromOrigin,
        ]
    }

    /// Counters read back from a dictionary (missing names are zero).
    public init(dictionary: [String: Int]) {
        self.init()
        requests = dictionary["requests"] ?? 0
        hits = dictionary["hits"] ?? 0
        misses = dictionary["misses"] ?? 0
        revalidations = dictionary["revalidations"] ?? 0
        staleServed = dictionary["staleServed"] ?? 0
        bypassed = dictionary["bypassed"] ?? 0
        blocked = dictionary["blocked"] ?? 0
        unreachableSkips = dictionary["unreachableSkips"] ?? 0
        networkTimeouts = dictionary["networkTimeouts"] ?? 0
        storeProblems = dictionary["storeProblems"] ?? 0
        bytesFromCache = dictionary["bytesFromCache"] ?? 0
        bytesFromOrigin = dictionary["bytesFromOrigin"] ?? 0
    }

    mutating func add(_ other: CacheCounters) {
        self = CacheCounters(dictionary: dictionary.merging(other.dictionary, uniquingKeysWith: +))
    }
}
