import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Socket options the proxy sets on every client connection.
enum SocketTuning {
    /// How many bytes may wait in the kernel unsent before the socket stops accepting more
    /// (`TCP_NOTSENT_LOWAT`).
    ///
    /// Without a limit a large answer is queued in the kernel whole and most of it is transmitted
    /// later, when the client's acknowledgements open the window — inside the *client's* receive
    /// path. On loopback or a fast link that doubles the client's CPU cost per megabyte (measured:
    /// 1 MB hits went from 1.7k to 4.3k req/s with wrk saturated either way). With the limit the
    /// rest stays with the proxy (a buffer it already holds, or a file offset for `sendfile`) and is
    /// written, and transmitted, when the socket drains. 16 KiB is the value large CDNs use.
    static let unsentLowWatermark = 16 * 1024

    /// The option for ``unsentLowWatermark``, where the platform has it.
    static var unsentLowWatermarkOption: ChannelOptions.Types.SocketOption? {
        #if os(Linux) || os(Android) || canImport(Darwin)
        ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: CInt(TCP_NOTSENT_LOWAT)))
        #else
        nil
        #endif
    }

    /// When SwiftNIO calls a connection unwritable (queued bytes over `high`) and writable again
    /// (under `low`). Answers do not read it: they wait for their own writes. Above the default
    /// (64 KiB) so that an answer sent from a file — a hit of 64 KiB or more, a player's range —
    /// does not make the connection unwritable and writable again, two trips through the
    /// pipeline, on every response.
    static let writeBufferWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 128 << 10, high: 256 << 10)

    /// The marks of a connection that became a tunnel (SwiftNIO's default): a tunnel stops reading
    /// one side while the other is unwritable, so these bound what it buffers for a slow reader.
    static let tunnelWriteBufferWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 32 << 10, high: 64 << 10)
}

extension ServerBootstrap {
    /// Applies ``SocketTuning`` to the connections this bootstrap accepts.
    func tunedForServing() -> ServerBootstrap {
        let bootstrap = childChannelOption(.writeBufferWaterMark, value: SocketTuning.writeBufferWaterMark)
        guard let option = SocketTuning.unsentLowWatermarkOption else { return bootstrap }
        return bootstrap.childChannelOption(option, value: SocketTuning.unsentLowWatermark)
    }
}
