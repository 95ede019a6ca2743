import HTTPWire
import NIOCore
import Testing
import WebCacheTestSupport

@testable import WebCacheProxy

/// The connection's decisions alone: no channel, no socket, no clock (the table in
/// `ConnectionTableTests` drives the same decisions through the whole handler).
@Suite("A client connection's decisions (ConnectionState)")
struct ConnectionStateTests {
    static func head(_ path: String) throws -> RequestParser.Part {
        .head(try RequestHead.parsing("GET \(path) HTTP/1.1\r\nHost: a.test\r\n\r\n"))
    }

    static func path(of part: RequestParser.Part?) -> String? {
        switch part {
        case .head(let head)?: head.uri
        case .end?: "end"
        case .body?: "body"
        case nil: nil
        }
    }

    @Test(
        "an answer left for the end of the tick's flush that made the connection unwritable is flushed before a read is decided, once"
    )
    func flushBeforeReading() {
        var state = ConnectionState()
        let withoutAnswer = state.flushesBeforeReading(writable: false)
        #expect(!withoutAnswer, "unwritable for another reason: nothing of this connection's to flush")
        state.answerLeftForFlush()
        let whenWritable = state.flushesBeforeReading(writable: true)
        #expect(!whenWritable, "a writable connection reads at once; the answer goes at the end of the tick")
        state.answerLeftForFlush()
        let whenUnwritable = state.flushesBeforeReading(writable: false)
        #expect(whenUnwritable, "flushed now, so that the read need not be held")
        let again = state.flushesBeforeReading(writable: false)
        #expect(!again, "once: still unwritable after the flush, the read is held as before")
        let reads = state.readRequested(writable: false)
        #expect(!reads)
        let resumed = state.becameWritable()
        #expect(resumed, "the read held is made once the connection drains")
    }

    @Test(
        "a streamed body's parts are handled while its answer is on its way; reads stop while the origin is full and resume when it takes more; the next request waits"
    )
    func streamedBody() throws {
        var state = ConnectionState()
        let post = RequestParser.Part.head(
            try RequestHead.parsing("POST /up HTTP/1.1\r\nHost: a.test\r\nContent-Length: 9\r\n\r\n"))
        #expect(Self.path(of: state.receive(post)) == "/up")
        state.startStreamingBody()
        state.startAnswering()
        let first = state.receive(.body(ByteBuffer(string: "abc")))
        #expect(Self.path(of: first) == "body")
        let reads = state.readRequested(writable: true)
        #expect(reads, "nothing waits: reading goes on")
        state.uploadFull()
        let readsWhenFull = state.readRequested(writable: true)
        #expect(!readsWhenFull, "the origin has enough for now")
        let readsWhenWritable = state.becameWritable()
        #expect(!readsWhenWritable, "writability alone does not resume an upload held back")
        let resumed = state.uploadResumed()
        #expect(resumed, "the read held is made now")
        let resumedAgain = state.uploadResumed()
        #expect(!resumedAgain, "once")
        let second = state.receive(.body(ByteBuffer(string: "def")))
        #expect(Self.path(of: second) == "body")
        let end = state.receive(.end)
        #expect(Self.path(of: end) == "end")
        #expect(!state.streamingBody)
        let next = state.receive(try Self.head("/next"))
        #expect(next == nil, "the next request waits behind the answer")
        let keptAlive = state.answerWritten(keepAlive: true)
        #expect(keptAlive)
        let waited = state.nextWaitingPart()
        #expect(Self.path(of: waited) == "/next")
    }

    @Test("an answer written before its streamed body ended closes the connection")
    func answeredBeforeTheBodyEnded() throws {
        var state = ConnectionState()
        let post = RequestParser.Part.head(
            try RequestHead.parsing("POST /up HTTP/1.1\r\nHost: a.test\r\nContent-Length: 9\r\n\r\n"))
        _ = state.receive(post)
        state.startStreamingBody()
        state.startAnswering()
        _ = state.receive(.body(ByteBuffer(string: "abc")))
        let keptAlive = state.answerWritten(keepAlive: true)
        #expect(!keptAlive)
    }

    @Test(
        "pipelined requests wait behind the answer on its way, in order; a read asked for meanwhile is held until they are answered"
    )
    func pipelining() throws {
        var state = ConnectionState()
        #expect(Self.path(of: state.receive(try Self.head("/1"))) == "/1")
        #expect(Self.path(of: state.receive(.end)) == "end")
        state.startAnswering()
        #expect(state.receive(try Self.head("/2")) == nil)
        #expect(state.receive(.end) == nil)
        #expect(state.receive(try Self.head("/3")) == nil)
        #expect(state.receive(.end) == nil)
        let decided1 = state.readRequested(writable: true)
        #expect(!decided1)
        #expect(state.hasWaitingParts)

        let decided2 = state.answerWritten(keepAlive: true)
        #expect(decided2)
        #expect(Self.path(of: state.nextWaitingPart()) == "/2")
        #expect(Self.path(of: state.nextWaitingPart()) == "end")
        // /2 goes on a task in turn: /3 waits for it, and nothing else happens yet.
        state.startAnswering()
        #expect(state.nextWaitingPart() == nil)
        #expect(state.nextStep() == .none)
        // A part arriving now still queues behind /3.
        #expect(state.receive(try Self.head("/4")) == nil)

        let decided3 = state.answerWritten(keepAlive: true)
        #expect(decided3)
        #expect(Self.path(of: state.nextWaitingPart()) == "/3")
        #expect(Self.path(of: state.nextWaitingPart()) == "end")
        #expect(Self.path(of: state.nextWaitingPart()) == "/4")
        #expect(state.nextWaitingPart() == nil)
        #expect(state.nextStep() == .read)
        #expect(state.nextStep() == .none, "the held read is issued once")
        let decided4 = state.readRequested(writable: true)
        #expect(decided4)
    }

    @Test(
        "reading goes on while an answer is on its way until a part waits behind it; an upgrade being spliced holds reads at once"
    )
    func readingWhileAnswering() throws {
        var state = ConnectionState()
        _ = state.receive(try Self.head("/1"))
        _ = state.receive(.end)
        state.startAnswering()
        let nothingWaits = state.readRequested(writable: true)
        #expect(nothingWaits, "a client that does not pipeline keeps its read interest")
        #expect(state.receive(try Self.head("/2")) == nil)
        let somethingWaits = state.readRequested(writable: true)
        #expect(!somethingWaits, "at most one read's worth of requests is buffered")
        let keptOpen = state.answerWritten(keepAlive: true)
        #expect(keptOpen)
        #expect(Self.path(of: state.nextWaitingPart()) == "/2")
        #expect(state.nextStep() == .read)

        var upgrading = ConnectionState()
        _ = upgrading.receive(try Self.head("/socket"))
        upgrading.startHandingOver()
        let upgradeRead = upgrading.readRequested(writable: true)
        #expect(!upgradeRead, "the bytes after an upgrade are the tunnel's")
    }

    @Test(
        "a connection not writable (its answers unread past the high watermark) is not read from until it drains; a part waiting behind an answer keeps the read held even then"
    )
    func readsHeldWhileNotWritable() throws {
        var state = ConnectionState()
        let whileFull = state.readRequested(writable: false)
        #expect(!whileFull, "a client that does not read its answers is not read from")
        let drained = state.becameWritable()
        #expect(drained, "the held read is issued once the answers drain")
        let again = state.becameWritable()
        #expect(!again, "and only once")

        _ = state.receive(try Self.head("/1"))
        _ = state.receive(.end)
        state.startAnswering()
        #expect(state.receive(try Self.head("/2")) == nil)
        let behindAnswer = state.readRequested(writable: false)
        #expect(!behindAnswer)
        let drainedWhileWaiting = state.becameWritable()
        #expect(!drainedWhileWaiting, "/2 waits behind /1: the read stays held until /1 is written")
        let keptOpen = state.answerWritten(keepAlive: true)
        #expect(keptOpen)
        #expect(Self.path(of: state.nextWaitingPart()) == "/2")
        #expect(Self.path(of: state.nextWaitingPart()) == nil)
        #expect(state.nextStep() == .read)

        var upgrading = ConnectionState()
        _ = upgrading.receive(try Self.head("/socket"))
        upgrading.startHandingOver()
        _ = upgrading.readRequested(writable: false)
        let spliced = upgrading.becameWritable()
        #expect(!spliced, "the bytes after an upgrade are the tunnel's, writable or not")
    }

    @Test(
        "bytes of a head that come while an answer is on its way get their time limit once it is written, not before, and once"
    )
    func headBehindAnswer() throws {
        var state = ConnectionState()
        _ = state.receive(try Self.head("/1"))
        _ = state.receive(.end)
        state.startAnswering()
        _ = state.readComplete(requestInProgress: false, headDeadlineRunning: false)  // the read of /1
        let whileAnswering = state.readComplete(requestInProgress: false, headDeadlineRunning: false)
        #expect(!whileAnswering, "a slow origin does not count against the next head")
        let beforeTheAnswer = state.headArrivedWhileAnswering(requestInProgress: false, headDeadlineRunning: false)
        #expect(!beforeTheAnswer)
        let keptOpen = state.answerWritten(keepAlive: true)
        #expect(keptOpen)
        let afterTheAnswer = state.headArrivedWhileAnswering(requestInProgress: false, headDeadlineRunning: false)
        #expect(afterTheAnswer)
        let again = state.headArrivedWhileAnswering(requestInProgress: false, headDeadlineRunning: false)
        #expect(!again, "once")

        var completed = ConnectionState()
        _ = completed.receive(try Self.head("/1"))
        _ = completed.receive(.end)
        completed.startAnswering()
        _ = completed.readComplete(requestInProgress: false, headDeadlineRunning: false)
        _ = completed.readComplete(requestInProgress: false, headDeadlineRunning: false)
        _ = completed.receive(try Self.head("/2"))  // the rest of the head came
        let keptOpen2 = completed.answerWritten(keepAlive: true)
        #expect(keptOpen2)
        let headCame = completed.headArrivedWhileAnswering(requestInProgress: false, headDeadlineRunning: false)
        #expect(!headCame, "the head is in: no time limit for it")
    }

    @Test("an answer that does not keep the connection alive closes it, waiting requests or not")
    func notKeptAlive() throws {
        var state = ConnectionState()
        _ = state.receive(try Self.head("/1"))
        state.startAnswering()
        _ = state.receive(try Self.head("/2"))
        let decided5 = state.answerWritten(keepAlive: false)
        #expect(!decided5)
    }

    @Test(
        "a connection that closes while an answer is on its way (the client went away, the answer was cut short) handles none of the requests waiting behind it"
    )
    func closedWhileAnswering() throws {
        var state = ConnectionState()
        _ = state.receive(try Self.head("/1"))
        state.startAnswering()
        let waits = state.receive(try Self.head("/2"))
        #expect(waits == nil)
        state.closed()
        let keptOpen = state.answerWritten(keepAlive: true)
        #expect(!keptOpen)
        #expect(state.nextWaitingPart() == nil, "/2 is not handled")
        #expect(state.nextStep() == .none)
    }

    @Test(
        "quiescing: closes at once when idle, not while a request is half received or answered; then after the answer")
    func quiescing() throws {
        var idle = ConnectionState()
        let decided6 = idle.quiesce(requestInProgress: false)
        #expect(decided6)

        var receiving = ConnectionState()
        let decided7 = receiving.quiesce(requestInProgress: true)
        #expect(!decided7)
        #expect(receiving.isQuiescing)

        var answering = ConnectionState()
        _ = answering.receive(try Self.head("/1"))
        answering.startAnswering()
        _ = answering.receive(try Self.head("/2"))
        let decided8 = answering.quiesce(requestInProgress: false)
        #expect(!decided8)
        let decided9 = answering.answerWritten(keepAlive: true)
        #expect(!decided9, "the connection closes after the answer in flight")
    }

    @Test(
        "a half-close is honoured after the last answer, once; at once when idle; and closes a connection whose tunnel is being connected"
    )
    func halfClose() throws {
        var answering = ConnectionState()
        _ = answering.receive(try Self.head("/1"))
        answering.startAnswering()
        _ = answering.receive(try Self.head("/2"))
        _ = answering.receive(.end)
        #expect(answering.inputEnded() == .none)
        let decided10 = answering.answerWritten(keepAlive: true)
        #expect(decided10)
        #expect(Self.path(of: answering.nextWaitingPart()) == "/2")
        #expect(Self.path(of: answering.nextWaitingPart()) == "end")
        // /2 is answered on the spot (its caller asks for the next step in turn).
        let decided11 = answering.answerWritten(keepAlive: true)
        #expect(decided11)
        #expect(answering.nextWaitingPart() == nil)
        #expect(answering.nextStep() == .closeAfterWrites)
        #expect(answering.nextStep() == .none, "the outer caller does not close twice")

        var idle = ConnectionState()
        #expect(idle.inputEnded() == .closeAfterWrites)

        var tunnelling = ConnectionState()
        tunnelling.startConnectingTunnel()
        #expect(tunnelling.inputEnded() == .close)
    }

    @Test(
        "bytes that are not HTTP are refused at once when nothing is in flight, else after the answers before them, and only once"
    )
    func malformedBytes() throws {
        var idle = ConnectionState()
        #expect(
            idle.bytesNotHTTP(status: 400, reason: "Bad Request")
                == .refuseMalformed(status: 400, reason: "Bad Request"))
        #expect(idle.nextStep() == .none)

        var answering = ConnectionState()
        _ = answering.receive(try Self.head("/1"))
        answering.startAnswering()
        _ = answering.receive(try Self.head("/2"))
        _ = answering.receive(.end)
        #expect(answering.bytesNotHTTP(status: 501, reason: "Not Implemented") == nil)
        let decided12 = answering.answerWritten(keepAlive: true)
        #expect(decided12)
        #expect(Self.path(of: answering.nextWaitingPart()) == "/2")
        #expect(Self.path(of: answering.nextWaitingPart()) == "end")
        let decided13 = answering.answerWritten(keepAlive: true)
        #expect(decided13)
        #expect(answering.nextStep() == .refuseMalformed(status: 501, reason: "Not Implemented"))
        #expect(answering.nextStep() == .none)
        #expect(answering.nextWaitingPart() == nil)
    }

    @Test(
        "the idle timeout closes between requests and when the client stops reading an answer, not while the origin is slow"
    )
    func idleTimeout() throws {
        var state = ConnectionState()
        #expect(state.idleTimedOut())
        state.startAnswering()
        #expect(!state.idleTimedOut(), "waiting for the origin is not quiet")
        #expect(state.countsWrites)
        state.writeQueued()
        #expect(state.idleTimedOut(), "the client has not taken what was written")
        state.writeDone()
        #expect(!state.idleTimedOut())
        let decided14 = state.answerWritten(keepAlive: true)
        #expect(decided14)
        #expect(!state.countsWrites)
    }

    @Test("a head that starts arriving gets a time limit once; the limit refuses only a head still missing")
    func headDeadline() throws {
        var state = ConnectionState()
        let decided15 = state.readComplete(requestInProgress: false, headDeadlineRunning: false)
        #expect(decided15)
        let decided16 = state.readComplete(requestInProgress: false, headDeadlineRunning: true)
        #expect(!decided16)
        _ = state.receive(try Self.head("/1"))
        let decided17 = state.readComplete(requestInProgress: true, headDeadlineRunning: false)
        #expect(!decided17, "the read gave a part")
        #expect(!state.headTimedOut(requestInProgress: true))
        _ = state.receive(.end)
        state.startAnswering()
        let decided18 = state.readComplete(requestInProgress: false, headDeadlineRunning: false)
        #expect(!decided18, "an answer is on its way")
        #expect(!state.headTimedOut(requestInProgress: false))
        let decided19 = state.answerWritten(keepAlive: true)
        #expect(decided19)
        #expect(state.headTimedOut(requestInProgress: false))
    }

    @Test(
        "a tunnel being connected holds parts and reads; a failure lets the refusal be answered like any answer; the hand-over lets reads go"
    )
    func tunnels() throws {
        var state = ConnectionState()
        state.startConnectingTunnel()
        #expect(state.receive(try Self.head("/early")) == nil)
        let decided20 = state.readRequested(writable: true)
        #expect(!decided20)
        state.tunnelFailed()
        #expect(state.phase == .reading)
        var connected = ConnectionState()
        connected.startConnectingTunnel()
        let decided21 = connected.readRequested(writable: true)
        #expect(!decided21)
        connected.tunnelConnected()
        #expect(connected.phase == .handingOver)
        let decided23 = connected.readRequested(writable: true)
        #expect(!decided23, "what follows belongs to the tunnel")
        connected.handedOver()
        let decided22 = connected.answerWritten(keepAlive: true)
        #expect(decided22)
        #expect(connected.nextStep() == .none, "the held read went with the hand-over")
    }
}
