import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sends raw bytes to 127.0.0.1:`port` and returns everything the server answers until it
/// closes the connection (send `Connection: close`). For requests no client library sends:
/// absolute-form targets, malformed messages.
public enum RawHTTPClient {
    /// Runs the blocking exchange on its own thread, so that the cooperative thread pool (two
    /// threads on a 2-core machine) stays free for the server under test.
    /// With `halfClose`, the client shuts its sending side after the request, as some clients do.
    public static func exchange(port: Int, _ request: String, timeout: TimeInterval = 10, halfClose: Bool = false)
        async throws -> String
    {
        try await onOwnThread { try blockingExchange(port: port, request, timeout: timeout, halfClose: halfClose) }
    }

    /// Opens a connection and keeps it open without sending anything, until ``close(_:)``.
    public static func openIdleConnection(port: Int) throws -> Int32 {
        try connected(port: port, timeout: 10)
    }

    /// Sends `request` and returns the connection without reading anything, as a client that
    /// stopped reading; close it with ``close(_:)``.
    public static func sendWithoutReading(port: Int, _ request: String) throws -> Int32 {
        let fd = try connected(port: port, timeout: 10)
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        return fd
    }

    /// Sends more bytes on a connection from ``sendWithoutReading(port:_:)``.
    public static func sendMore(_ connection: Int32, _ text: String) {
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, flags) }
    }

    /// Sends `text` again and again on `connection` without reading, as a client that pipelines
    /// requests and never reads the answers, until the other side has taken no byte for
    /// `stalled` seconds or `limit` bytes are sent; returns how many were sent. The connection's
    /// send buffer is made small first, so that what is sent is about what the other side read.
    public static func sendUntilStalled(_ connection: Int32, _ text: String, limit: Int, stalled: TimeInterval)
        async -> Int
    {
        await onOwnThread { blockingSendUntilStalled(connection, Array(text.utf8), limit: limit, stalled: stalled) }
    }

    private static func blockingSendUntilStalled(
        _ connection: Int32, _ bytes: [UInt8], limit: Int, stalled: TimeInterval
    )
        -> Int
    {
        var size: Int32 = 4096
        setsockopt(connection, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL | MSG_DONTWAIT)
        #else
        let flags = Int32(MSG_DONTWAIT)
        #endif
        var sent = 0
        var offset = 0
        while sent < limit {
            let result = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, flags) }
            if result > 0 {
                sent += result
                offset = (offset + result) % bytes.count
                continue
            }
            guard result < 0, errno == EAGAIN || errno == EWOULDBLOCK else { return sent }
            var descriptor = pollfd(fd: connection, events: Int16(POLLOUT), revents: 0)
            if poll(&descriptor, 1, Int32(stalled * 1000)) == 0 { return sent }
        }
        return sent
    }

    /// Everything the other side sends until it closes `connection`; `nil` when it is still
    /// open after `timeout` seconds of silence. Waits on a thread of its own, as ``exchange``
    /// does: a blocked cooperative thread (two on a 2-core machine) starves every other test's
    /// tasks for as long as it waits.
    public static func receiveUntilClosed(_ connection: Int32, timeout: Int) async -> String? {
        await onOwnThread { blockingReceiveUntilClosed(connection, timeout: timeout) }
    }

    private static func blockingReceiveUntilClosed(_ connection: Int32, timeout: Int) -> String? {
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(connection, &buffer, buffer.count, 0)
            if count == 0 { return String(decoding: received, as: UTF8.self) }
            if count < 0 { return errno == ECONNRESET ? String(decoding: received, as: UTF8.self) : nil }
            received.append(buffer, count: count)
        }
    }

    /// Reads and discards what `connection` has, waiting at most `timeout` seconds for more;
    /// returns whether the other side closed it (`false` when it is still open). Waits on a
    /// thread of its own (``receiveUntilClosed(_:timeout:)``).
    public static func drainsToClose(_ connection: Int32, timeout: Int) async -> Bool {
        await onOwnThread { blockingDrainsToClose(connection, timeout: timeout) }
    }

    private static func blockingDrainsToClose(_ connection: Int32, timeout: Int) -> Bool {
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(connection, &buffer, buffer.count, 0)
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }

    /// Closes a connection from ``openIdleConnection(port:)``.
    public static func close(_ connection: Int32) {
        _ = closeDescriptor(connection)
    }

    private static func closeDescriptor(_ fd: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(fd)
        #else
        Darwin.close(fd)
        #endif
    }

    /// Like ``exchange(port:_:timeout:halfClose:)``, and says whether the server ended the
    /// connection with a reset rather than a close (`ECONNRESET`: a cut the client can tell).
    public static func exchangeNotingReset(port: Int, _ request: String, timeout: TimeInterval = 10)
        async throws -> (answer: String, reset: Bool)
    {
        try await onOwnThread {
            var reset = false
            let answer = try blockingExchange(port: port, request, timeout: timeout, halfClose: false, reset: &reset)
            return (answer, reset)
        }
    }

    static func blockingExchange(port: Int, _ request: String, timeout: TimeInterval, halfClose: Bool) throws -> String
    {
        var reset = false
        return try blockingExchange(port: port, request, timeout: timeout, halfClose: halfClose, reset: &reset)
    }

    private static func blockingExchange(
        port: Int, _ request: String, timeout: TimeInterval, halfClose: Bool, reset: inout Bool
    ) throws -> String {
        let fd = try connected(port: port, timeout: timeout)
        defer { _ = closeDescriptor(fd) }
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let result = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard result > 0 else { throw POSIXError(.EPIPE) }
            sent += result
        }
        if halfClose { _ = shutdown(fd, Int32(SHUT_WR)) }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == ECONNRESET { reset = true }
            if count <= 0 { break }
            received.append(buffer, count: count)
        }
        return String(decoding: received, as: UTF8.self)
    }

    private static func connected(port: Int, timeout: TimeInterval) throws -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var time = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            _ = closeDescriptor(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        return fd
    }
}
