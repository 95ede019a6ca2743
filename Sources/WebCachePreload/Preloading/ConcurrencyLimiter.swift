/// Admits at most `total` operations at once and at most `perHost` to one host, in arrival
/// order.
actor ConcurrencyLimiter {
    private let total: Int
    private let perHost: Int
    private var running = 0
    private var runningByHost: [String: Int] = [:]
    private var waiting: [(host: String, continuation: CheckedContinuation<Void, Never>)] = []

    init(total: Int, perHost: Int) {
        self.total = max(1, total)
        self.perHost = max(1, perHost)
    }

    /// Runs `operation` once a slot for `host` is free.
    func run<T: Sendable>(host: String, _ operation: @Sendable () async -> T) async -> T {
        await acquire(host)
        let result = await operation()
        release(host)
        return result
    }

    private func acquire(_ host: String) async {
        if canStart(host) {
            start(host)
            return
        }
        await withCheckedContinuation { waiting.append((host, $0)) }
    }

    private func release(_ host: String) {
        running -= 1
        runningByHost[host, default: 1] -= 1
        if runningByHost[host] == 0 { runningByHost[host] = nil }
        // Wake the first waiters that may start now (a busy host does not block the others).
        var index = 0
        while index < waiting.count {
            let next = waiting[index]
            if canStart(next.host) {
                waiting.remove(at: index)
                start(next.host)
                next.continuation.resume()
            } else {
                index += 1
            }
        }
    }

    private func canStart(_ host: String) -> Bool {
        running < total && runningByHost[host, default: 0] < perHost
    }

    private func start(_ host: String) {
        running += 1
        runningByHost[host, default: 0] += 1
    }
}
