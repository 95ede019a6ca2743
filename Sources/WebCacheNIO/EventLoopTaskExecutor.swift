import NIOCore
import NIOPosix
import WebCache

/// Runs a task's jobs on one event loop: a proxy connection's engine work stays on the thread
/// of its connection, without hopping to Swift's global pool and back for every response.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public final class EventLoopTaskExecutor: TaskExecutor {
    private let eventLoop: any EventLoop

    /// An executor for the jobs of tasks that prefer `eventLoop`.
    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Runs `job` on the event loop.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}

extension EventLoop {
    /// Starts `operation` as a task that prefers this event loop's thread where the platform
    /// allows, else as an ordinary task; returns the task (to cancel it).
    @discardableResult
    public func startTask(_ operation: sending @escaping @isolated(any) () async -> Void) -> Task<Void, Never> {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            Task(executorPreference: EventLoopTaskExecutor(self), operation: operation)
        } else {
            Task(operation: operation)
        }
    }
}

/// The engine's tasks on their caller's event loop (``CallersLoop`` in WebCache): installed by
/// ``SwiftNIOOrigin`` and the proxy, so that a proxy connection's fetch, its origin connection
/// and the body it streams stay on one thread.
package struct EventLoopCallerTasks: CallerTaskStarting {
    /// Installs these for the process (once is enough; again is harmless).
    package static func install() {
        CallersLoop.install(EventLoopCallerTasks())
    }

    package func task<Success: Sendable>(
        _ operation: sending @escaping @isolated(any) () async throws -> Success
    ) -> Task<Success, any Error> {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *),
            let loop = MultiThreadedEventLoopGroup.currentEventLoop
        {
            return Task(executorPreference: EventLoopTaskExecutor(loop), operation: operation)
        }
        return Task(operation: operation)
    }
}
