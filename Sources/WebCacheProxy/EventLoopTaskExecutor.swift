import NIOCore

/// Runs a task's jobs on one event loop: a request's engine work then stays on the thread of
/// its connection, without hopping to Swift's global pool and back for every response.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class EventLoopTaskExecutor: TaskExecutor {
    private let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}

extension EventLoop {
    /// Starts `operation` as a task that prefers this event loop's thread where the platform
    /// allows, else as an ordinary task.
    func startTask(_ operation: sending @escaping @isolated(any) () async -> Void) {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            Task(executorPreference: EventLoopTaskExecutor(self), operation: operation)
        } else {
            Task(operation: operation)
        }
    }
}
