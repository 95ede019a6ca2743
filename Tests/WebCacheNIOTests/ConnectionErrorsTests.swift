import NIOCore
import Testing

@testable import WebCacheNIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What SwiftNIO's errors say about an origin: which mean it cannot be reached (then what is
/// stored may be served as if offline), and which are this process's own shortage.
@Suite("Connection errors: the origin's, or this process's")
struct ConnectionErrorsTests {
    @Test(
        "refused, unreachable and timed-out connections are the origin's; running out of descriptors or memory is not")
    func localShortage() {
        for code in [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH] {
            #expect(ConnectionErrors.failure(IOError(errnoCode: code, reason: "connect")) != nil)
            #expect(!ConnectionErrors.localShortage(IOError(errnoCode: code, reason: "connect")))
        }
        #expect(ConnectionErrors.failure(ChannelError.connectTimeout(.seconds(1))) == "the connection timed out")
        for code in [EMFILE, ENFILE, ENOBUFS, ENOMEM] {
            #expect(ConnectionErrors.localShortage(IOError(errnoCode: code, reason: "socket")))
            #expect(ConnectionErrors.failure(IOError(errnoCode: code, reason: "socket")) == nil)
        }
        #expect(!ConnectionErrors.localShortage(ChannelError.eof))
    }
}
