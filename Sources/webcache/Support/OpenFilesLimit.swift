#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open files (`RLIMIT_NOFILE`), which a proxy meets before its
/// connection limit: each client connection is a descriptor, its miss another to the origin, and
/// a body sent from its file a third. Many systems start processes at a soft limit of 1,024.
enum OpenFilesLimit {
    /// Descriptors one client connection may hold at once: its own, the origin's, a body file.
    static let perConnection = 3
    /// Descriptors the proxy holds besides its connections (the index, logs, the listening socket).
    static let reserve = 64

    /// Raises the soft limit to the hard one, as nginx's `worker_rlimit_nofile` and Go's runtime
    /// do (on Darwin no further than `OPEN_MAX`, which `setrlimit` refuses to pass); returns the
    /// soft limit in force afterwards, `nil` when it cannot be read.
    static func raise() -> Int? {
        var limits = rlimit()
        guard getrlimit(resourceNumber, &limits) == 0 else { return nil }
        var target = limits.rlim_max
        #if canImport(Darwin)
        target = min(target, rlim_t(OPEN_MAX))
        #endif
        if limits.rlim_cur < target {
            var raised = limits
            raised.rlim_cur = target
            if setrlimit(resourceNumber, &raised) == 0 { limits = raised }
        }
        return Int(clamping: limits.rlim_cur)  // unlimited (RLIM_INFINITY) comes out as Int.max
    }

    /// The connections `limit` open files can carry (``perConnection`` each, after ``reserve``).
    static func connections(within limit: Int) -> Int {
        max(0, limit - reserve) / perConnection
    }

    #if canImport(Glibc)
    private static let resourceNumber = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceNumber = RLIMIT_NOFILE
    #endif
}
