import Foundation

extension TestOrigin {
    /// Serves `body` at `path`, fresh for 600 s: its first `first` bytes at once, the rest once
    /// the gate returned is opened (a download a test watches arrive).
    public func routeHeldBody(_ path: String, _ body: Data, sendingFirst first: Int) -> OriginGate {
        let rest = OriginGate()
        route(path) { _ in
            var response = TestOrigin.Response(headers: [("Cache-Control", "max-age=600")], body: body)
            response.pauseAfter = first
            response.pauseUntil = rest
            return response
        }
        return rest
    }
}
