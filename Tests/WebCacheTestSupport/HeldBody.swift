import Foundation

extension TestOrigin {
    /// Serves `body` at `path` with `cacheControl` (fresh for 600 s unless told), chunked if
    /// asked: its first `first` bytes at once, the rest once the gate returned is opened (a
    /// download a test watches arrive; an event stream or long poll that goes quiet).
    public func routeHeldBody(
        _ path: String, _ body: Data, sendingFirst first: Int, cacheControl: String = "max-age=600",
        chunked: Bool = false
    ) -> OriginGate {
        let rest = OriginGate()
        route(path) { _ in
            var response = TestOrigin.Response(headers: [("Cache-Control", cacheControl)], body: body)
            response.chunked = chunked
            response.pauseAfter = first
            response.pauseUntil = rest
            return response
        }
        return rest
    }
}
