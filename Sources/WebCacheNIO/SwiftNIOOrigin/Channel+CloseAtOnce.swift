import NIOCore
import NIOSSL

extension Channel {
    /// Closes an origin connection left in the middle of an exchange (a body given up, a
    /// failure) at once, without TLS's closing handshake: `close()` on an HTTPS connection sends
    /// `close_notify` and waits up to five seconds for the origin's — while the origin, in the
    /// middle of a body, goes on sending and every byte of it is read and decrypted for nothing
    /// (or, when it sends nothing, the connection stays open for those seconds). Nothing that
    /// matters is lost: the exchange has already ended for its reader. A plain connection closes
    /// as `close()` does.
    func closeAtOnce() {
        guard eventLoop.inEventLoop else {
            eventLoop.execute { self.closeAtOnce() }
            return
        }
        // A close sent from the TLS handler's own context goes to the handlers in front of it —
        // the socket — not through it.
        if let tls = try? pipeline.syncOperations.context(handlerType: NIOSSLClientHandler.self) {
            tls.close(promise: nil)
        } else {
            close(promise: nil)
        }
    }
}
