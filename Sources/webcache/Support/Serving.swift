import ArgumentParser
import Dispatch
import Foundation

/// Parses `HOST:PORT` (an IPv6 host may be in brackets) for the option named `option`.
func parseAddress(_ text: String, option: String) throws -> (host: String, port: Int) {
    guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
        (0...65_535).contains(port)
    else {
        throw ValidationError("\(option) needs HOST:PORT, not '\(text)'")
    }
    return (String(text[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port)
}

/// Calls `stop` on SIGINT or SIGTERM until the returned sources are cancelled. Signal delivery
/// needs a dispatch source; the work itself stays in Swift concurrency.
func onStopSignals(_ stop: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number)
        source.setEventHandler(handler: stop)
        source.resume()
        return source
    }
}
