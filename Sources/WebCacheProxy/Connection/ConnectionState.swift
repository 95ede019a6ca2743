import HTTPWire
import NIOCore

/// The decisions of one client connection as a value: which request parts are handled now and
/// which wait, when reading stops and resumes, and when and how the connection closes. Events
/// go in as calls; what the connection must do comes out as return values. It holds no channel,
/// no clock and no request, so every decision can be tested alone (`ConnectionStateTests`).
///
/// One request is answered at a time, in order: parts that arrive while an answer is on its way
/// wait. Reading goes on while an answer is on its way until a part waits (as SwiftNIO's
/// `HTTPServerPipelineHandler` does): a client that does not pipeline costs no switching of the
/// socket's read interest (two `epoll_ctl` calls per answer), and one that does has at most one
/// read's worth of requests buffered; a read asked for then is held until the answer is written.
/// `ProxyHTTPHandler` carries out what it decides (AsyncHTTPClient's
/// `HTTP1ConnectionStateMachine` is the model).
struct ConnectionState {
    /// What the connection is doing.
    enum Phase: Equatable {
        /// Reading requests; answers written on the spot go out without leaving this phase.
        case reading
        /// An answer is on its way on a task: parts that arrive wait behind it.
        case answering
        /// The connection is becoming a tunnel (its destination is connected, or an upgrade is being
        /// spliced): nothing more is read here; the tunnel reads what follows.
        case handingOver
        /// A `CONNECT` destination is being connected (or its certificate made).
        case connectingTunnel
    }

    /// What the connection does once the requests waiting have been handled.
    enum NextStep: Equatable {
        /// Nothing yet (an answer is on its way again, or no read was asked for).
        case none
        /// Read: a read the channel asked for was held while answering.
        case read
        /// Close once what has been written is out (the client half-closed).
        case closeAfterWrites
        /// Answer bytes that were not HTTP with `status`, then close.
        case refuseMalformed(status: Int, reason: String)
    }

    /// What the connection does when the client half-closes.
    enum InputClosedStep: Equatable {
        case none
        case close
        case closeAfterWrites
    }

    private(set) var phase = Phase.reading
    /// Request parts that arrived while answering, in order.
    private var waiting = CircularBuffer<RequestParser.Part>()
    /// A read the channel asked for while answering.
    private var readHeld = false
    /// The server is shutting down: answers in flight are written, then the connection closes.
    private(set) var isQuiescing = false
    /// The client half-closed: what it sent is answered, then the connection closes.
    private var inputClosed = false
    /// Bytes the parser refused, refused in turn once the answers before them are out.
    private var malformed: (status: Int, reason: String)?
    /// Writes of an answer on a task that the socket has not taken yet.
    private var writesOutstanding = 0
    /// Whether the current read gave the parser a whole part.
    private var readGaveParts = false
    /// Bytes came while an answer was on its way and gave no whole part: a head is arriving, and
    /// gets its time limit once the answer is written.
    private var headArrivingBehindAnswer = false
    /// A step that ends the connection was taken: nothing more is handled or decided.
    private var ending = false
    /// The connection is closed (``closed()``).
    private var isClosed = false
    /// The body of the request being answered is still arriving, and goes to the origin as it
    /// does: its parts are handled at once, whatever the phase.
    private(set) var streamingBody = false
    /// The origin has all of the streamed body it can take for now: reads are held.
    private var uploadPaused = false
    /// An answer was written and left for the end of the tick's flush since the channel last
    /// asked for a read (``flushesBeforeReading(writable:)``).
    private var answerAwaitsFlush = false

    /// Whether requests are waiting to be handled.
    var hasWaitingParts: Bool { !waiting.isEmpty }

    // MARK: Requests

    /// A part from the parser: returned when it is to be handled now, `nil` when it waits
    /// behind an answer (or behind parts already waiting).
    mutating func receive(_ part: RequestParser.Part) -> RequestParser.Part? {
        readGaveParts = true
        headArrivingBehindAnswer = false
        if streamingBody && waiting.isEmpty {
            if case .end = part {
                streamingBody = false
                uploadPaused = false
            }
            return part
        }
        guard phase == .reading && waiting.isEmpty else {
            waiting.append(part)
            return nil
        }
        return part
    }

    /// An answer goes on a task: parts wait until ``answerWritten(keepAlive:)``, and reads are
    /// held once one waits.
    mutating func startAnswering() {
        phase = .answering
    }

    /// The body of the request just answered on a task goes to the origin as it arrives: its
    /// parts are handled as they come, up to its end; what follows waits as usual.
    mutating func startStreamingBody() {
        streamingBody = true
        uploadPaused = false
    }

    /// The origin has enough of the streamed body for now: reads are held until
    /// ``uploadResumed()``.
    mutating func uploadFull() {
        guard streamingBody else { return }
        uploadPaused = true
    }

    /// The origin takes more of the streamed body: `true` to read now, when a read was held.
    mutating func uploadResumed() -> Bool {
        guard uploadPaused else { return false }
        uploadPaused = false
        guard readHeld, !ending, phaseAllowsReading else { return false }
        readHeld = false
        return true
    }

    /// An upgrade is being spliced to its destination: parts wait and reads are held, since the
    /// bytes that follow belong to the tunnel.
    mutating func startHandingOver() {
        phase = .handingOver
    }

    /// A `CONNECT` destination is being connected.
    mutating func startConnectingTunnel() {
        phase = .connectingTunnel
    }

    /// The tunnel's destination is connected: the connection is handed over next.
    mutating func tunnelConnected() {
        phase = .handingOver
    }

    /// The tunnel could not be set up: a refusal is answered next, as any answer.
    mutating func tunnelFailed() {
        phase = .reading
    }

    /// The connection is handed to a tunnel: reading resumes there.
    mutating func handedOver() {
        readHeld = false
    }

    /// An answer is written. Returns whether the connection stays open for the requests that
    /// follow (then handle ``nextWaitingPart()`` until `nil`, then take ``nextStep()``).
    /// An answer written before its request's streamed body ended (the origin answered early,
    /// or the request was refused) closes the connection: the rest of the body is not read.
    /// So does an answer whose connection closed meanwhile (``closed()``).
    mutating func answerWritten(keepAlive: Bool) -> Bool {
        phase = .reading
        writesOutstanding = 0
        return keepAlive && !isQuiescing && !streamingBody && !isClosed
    }

    /// The connection is closed: its client went away, or an answer was cut short (its origin
    /// failed half-way, and the close tells the client). Requests that waited behind the answer
    /// are not handled: nobody would get their answers, and one that is not safe to repeat
    /// (a `POST`) must not reach the origin when its client sees only the close.
    mutating func closed() {
        isClosed = true
        ending = true
    }

    /// The next part that waited, while no answer is on its way.
    mutating func nextWaitingPart() -> RequestParser.Part? {
        guard phase == .reading, !ending else { return nil }
        return waiting.popFirst()
    }

    /// After the waiting parts: what the connection does next. A step that ends the connection
    /// is returned once (an answer written on the spot while handling the waiting parts has
    /// taken it already when its caller asks).
    mutating func nextStep() -> NextStep {
        guard phase == .reading, waiting.isEmpty, !ending else { return .none }
        if let malformed {
            ending = true
            return .refuseMalformed(status: malformed.status, reason: malformed.reason)
        }
        if inputClosed {
            ending = true
            return .closeAfterWrites
        }
        if readHeld {
            readHeld = false
            return .read
        }
        return .none
    }

    // MARK: Channel events

    /// The channel asks for a read: `true` to read now, `false` when it is held until the
    /// answer is written (a part waits behind it, or the connection is becoming a tunnel), or
    /// until the connection is `writable` again (``becameWritable()``): a client that sends
    /// requests without reading the answers (pipelining) is not read from while its answers
    /// pile up past the write buffer's high watermark, or they would take any amount of memory.
    mutating func readRequested(writable: Bool) -> Bool {
        guard writable, phaseAllowsReading, !uploadPaused else {
            readHeld = true
            return false
        }
        return true
    }

    /// An answer was written whole and left for the flush at the end of the loop's tick.
    mutating func answerLeftForFlush() {
        answerAwaitsFlush = true
    }

    /// The channel asks for a read while the connection is not `writable`: `true` to flush first,
    /// then decide (``readRequested(writable:)``), when an answer written since the last read
    /// was left for the end of the tick's flush. An answer over the high watermark (a range of a
    /// video, a body of a megabyte from its file) makes the connection unwritable before that
    /// flush; flushed now, it is usually written at once and reading goes on, where holding the
    /// read would take the socket out of the loop's poll set and put it back (two `epoll_ctl`)
    /// around every such answer.
    mutating func flushesBeforeReading(writable: Bool) -> Bool {
        defer { answerAwaitsFlush = false }
        return answerAwaitsFlush && !writable
    }

    /// The connection is writable again (the client read what piled up): `true` to read now,
    /// when a read was held for that alone — not while a part waits behind an answer, nor while
    /// the connection becomes a tunnel.
    mutating func becameWritable() -> Bool {
        guard readHeld, !ending, phaseAllowsReading, !uploadPaused else { return false }
        readHeld = false
        return true
    }

    /// Whether the phase lets reading go on: reading, or answering with no part waiting behind
    /// the answer (not while the connection becomes a tunnel).
    private var phaseAllowsReading: Bool {
        switch phase {
        case .reading: true
        case .answering: waiting.isEmpty
        case .handingOver, .connectingTunnel: false
        }
    }

    /// The channel asks for a read while the parser waits after a `CONNECT` or an upgrade:
    /// held, so that a client cannot heap up bytes before it is known whose they are, until the
    /// connection is handed over or goes on in HTTP (``nextStep()`` returns `.read`).
    mutating func holdRead() {
        readHeld = true
    }

    /// A write of an answer on a task; counted until the socket takes it.
    mutating func writeQueued() {
        writesOutstanding += 1
    }

    /// The socket took a write counted by ``writeQueued()``.
    mutating func writeDone() {
        writesOutstanding = max(0, writesOutstanding - 1)
    }

    /// Whether writes go through the count of ``writeQueued()`` (an answer on a task).
    var countsWrites: Bool { phase != .reading }

    /// The connection was quiet for the idle timeout: `true` to close it. Between requests it
    /// closes; waiting for a slow origin is not quiet, but an answer the client stopped reading
    /// (writes outstanding) is.
    func idleTimedOut() -> Bool {
        phase == .reading || writesOutstanding > 0
    }

    /// The server is shutting down: `true` to close now (nothing in flight, no request half
    /// received); otherwise the connection closes after the answer in flight.
    mutating func quiesce(requestInProgress: Bool) -> Bool {
        isQuiescing = true
        return phase == .reading && !requestInProgress
    }

    /// The client half-closed its side.
    mutating func inputEnded() -> InputClosedStep {
        inputClosed = true
        // Bytes sent after a CONNECT wait in the parser; with the EOF the tunnel cannot carry them.
        if phase == .connectingTunnel { return .close }
        guard phase == .reading, waiting.isEmpty, !ending else { return .none }
        ending = true
        return .closeAfterWrites
    }

    /// The parser refused the bytes: returns the refusal to send now, or `nil` when answers to
    /// the requests before them go first (``nextStep()`` then returns it).
    mutating func bytesNotHTTP(status: Int, reason: String) -> NextStep? {
        malformed = (status, reason)
        guard phase == .reading, waiting.isEmpty, !ending else { return nil }
        ending = true
        return .refuseMalformed(status: status, reason: reason)
    }

    /// A read is complete: `true` when it brought bytes but no whole part of a request while
    /// the connection waits for one — a head is arriving and gets its time limit from now
    /// (unless one is running).
    mutating func readComplete(requestInProgress: Bool, headDeadlineRunning: Bool) -> Bool {
        defer { readGaveParts = false }
        if !readGaveParts && phase == .answering && !streamingBody { headArrivingBehindAnswer = true }
        return !readGaveParts && phase == .reading && !requestInProgress && !headDeadlineRunning
    }

    /// After the waiting parts, once an answer is written: `true` when bytes of a head came while
    /// it was on its way (``readComplete(requestInProgress:headDeadlineRunning:)`` held back its
    /// time limit), so that the time limit starts now — as it would had they been read now.
    mutating func headArrivedWhileAnswering(requestInProgress: Bool, headDeadlineRunning: Bool) -> Bool {
        guard headArrivingBehindAnswer, phase == .reading, !ending else { return false }
        headArrivingBehindAnswer = false
        return !requestInProgress && !headDeadlineRunning
    }

    /// The time limit of an arriving head passed: `true` to refuse it (408) and close, unless
    /// the head arrived meanwhile or an answer is on its way.
    func headTimedOut(requestInProgress: Bool) -> Bool {
        !requestInProgress && phase == .reading
    }
}
