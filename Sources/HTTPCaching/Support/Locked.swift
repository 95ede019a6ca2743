#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a mutex. Never hold it across an `await`: `withLock` takes a synchronous
/// closure, so the compiler enforces that.
package final class Locked<Value>: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        pthread_mutex_init(&mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(&mutex)
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body(&value)
    }
}
