import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What SwiftNIO's errors say about a connection to an origin: that none could be made (the
/// origin is unreachable: offline answers may follow), or that one was dropped under a request
/// (a safe request may be sent again on a new one).
package enum ConnectionErrors {
    /// Why no connection could be made at all, in a few words; `nil` when `error` is not such
    /// a failure.
    package static func failure(_ error: any Error) -> String? {
        switch error {
        case let error as NIOConnectionError:
            if error.connectionErrors.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil {
                return "the name does not resolve"
            }
            // A socket this process could not make (out of descriptors or memory) says nothing of
            // the origin: counted as unreachable, it would have every request to it served as if
            // offline for the back-off window.
            if error.connectionErrors.contains(where: { localShortage($0.error) }) { return nil }
            return error.connectionErrors.lazy.compactMap { failure($0.error) }.first ?? "connection failed"
        case is SocketAddressError:
            return "the name does not resolve"
        case let error as ChannelError:
            if case .connectTimeout = error { return "the connection timed out" }
            return nil
        case let error as IOError:
            guard
                [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, ENETDOWN, EHOSTDOWN, EADDRNOTAVAIL].contains(error.errnoCode)
            else { return nil }
            return String(cString: strerror(error.errnoCode)).lowercased()
        default:
            return nil
        }
    }

    /// Whether `error` is this process running out of what a socket needs: descriptors (its own
    /// limit or the system's), buffers or memory.
    package static func localShortage(_ error: any Error) -> Bool {
        guard let error = error as? IOError else { return false }
        return [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errnoCode)
    }

    /// Whether `error` is a connection closed or reset under a request before any answer, or a
    /// kept-alive connection whose next response could not be parsed.
    package static func dropped(_ error: any Error) -> Bool {
        switch error {
        case is HTTPParserError:
            return true
        case let error as ChannelError:
            switch error {
            case .ioOnClosedChannel, .eof, .alreadyClosed, .outputClosed: return true
            default: return false
            }
        case let error as IOError:
            return [ECONNRESET, EPIPE].contains(error.errnoCode)
        default:
            return false
        }
    }
}
