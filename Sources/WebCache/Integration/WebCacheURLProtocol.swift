import Foundation
import HTTPCaching
import HTTPTypes

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `URLProtocol` that answers any `URLSession`'s http(s) requests through an ``HTTPCache``.
///
/// ```swift
/// let configuration = URLSessionConfiguration.default
/// WebCacheURLProtocol.install(cache, into: configuration)   // the one line
/// let session = URLSession(configuration: configuration)
/// ```
///
/// The request's `cachePolicy` maps to a ``RequestMode``. A body from the origin reaches the
/// session as it arrives, while it is stored (``BodyDelivery``). Redirects are followed inside the
/// cache (each hop cached) and the final response is reported, because calling
/// `client.urlProtocol(_:wasRedirectedTo:redirectResponse:)` crashes on Linux. The cache's own
/// origin must not go through this protocol: give ``URLSessionOrigin`` a configuration without
/// it (or use `AsyncHTTPClientOrigin`). Request bodies, from `httpBody` or
/// `httpBodyStream`, reach the origin unchanged.
///
/// One cache serves all sessions the protocol is installed in; installing again replaces it.
public class WebCacheURLProtocol: URLProtocol {
    private static let installed = Locked<HTTPCache?>(nil)
    private let loading = Locked<Task<Void, Never>?>(nil)

    /// How a response body reaches the session's task.
    public enum BodyDelivery: Sendable, Hashable {
        /// In pieces as it arrives from the origin: a download shows its progress and a page its
        /// first bytes at once. The default on Apple platforms.
        case asItArrives
        /// In one piece once it is whole. The default on Linux, where swift-corelibs-foundation
        /// hands a completion handler (and `data(for:)`) only the last piece a `URLProtocol`
        /// loads; a session whose tasks report to a `URLSessionDataDelegate` gets every piece
        /// there, and may ask for ``asItArrives``.
        case whole

        /// The platform's default.
        public static var platformDefault: BodyDelivery {
            #if canImport(FoundationNetworking)
            .whole
            #else
            .asItArrives
            #endif
        }
    }

    /// How this class delivers bodies: the platform's default, and the other way in a subclass
    /// of its own, which ``install(_:into:bodies:)`` picks (a class registered by hand gets the
    /// default).
    class var bodyDelivery: BodyDelivery { .platformDefault }

    /// Makes `cache` answer the http(s) requests of sessions created with `configuration`
    /// (Linux ignores `URLProtocol.registerClass` for http(s); `protocolClasses` always works),
    /// delivering bodies as `bodies` says.
    public static func install(
        _ cache: HTTPCache, into configuration: URLSessionConfiguration, bodies: BodyDelivery = .platformDefault
    ) {
        installed.withLock { $0 = cache }
        let ours: [AnyClass] = [WebCacheURLProtocol.self, ArrivingBodyURLProtocol.self, WholeBodyURLProtocol.self]
        let others = (configuration.protocolClasses ?? []).filter { theirs in !ours.contains { $0 == theirs } }
        let chosen: AnyClass =
            if bodies == .platformDefault {
                WebCacheURLProtocol.self
            } else {
                bodies == .asItArrives ? ArrivingBodyURLProtocol.self : WholeBodyURLProtocol.self
            }
        configuration.protocolClasses = [chosen] + others
    }

    /// Stops answering requests (sessions fall through to the network).
    public static func uninstall() {
        installed.withLock { $0 = nil }
    }

    /// The request mode for a `URLRequest.CachePolicy` (all six of Foundation's policies).
    public static func mode(for policy: URLRequest.CachePolicy) -> RequestMode {
        switch policy {
        case .reloadIgnoringLocalCacheData: return .reload
        case .reloadIgnoringLocalAndRemoteCacheData: return .reloadIgnoringRemoteCaches
        case .returnCacheDataElseLoad: return .preferCache
        case .returnCacheDataDontLoad: return .onlyCache
        case .reloadRevalidatingCacheData: return .revalidate
        default: return .default
        }
    }

    /// Claims http(s) requests while a cache is installed.
    override public class func canInit(with request: URLRequest) -> Bool {
        guard let url = request.url, HTTPURLs.isHTTP(url) else { return false }
        return installed.withLock { $0 != nil }
    }

    /// Requests are used as they are; the cache normalises its own keys.
    override public class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// Answers the request through the installed cache.
    override public func startLoading() {
        guard let cache = Self.installed.withLock({ $0 }), let url = request.url else {
            client?.urlProtocol(self, didFailWithError: URLError(.unsupportedURL))
            return
        }
        let this = UncheckedSendable(self)
        let urlRequest = UncheckedSendable(request)
        let delivery = Self.bodyDelivery
        let task = Task {
            await WebCacheURLProtocol.load(this, urlRequest, cache: cache, url: url, delivery: delivery)
        }
        loading.withLock { $0 = task }
    }

    // URLProtocol is not Sendable; URLSession calls back into it from any thread by design.
    private static func load(
        _ box: UncheckedSendable<WebCacheURLProtocol>, _ requestBox: UncheckedSendable<URLRequest>, cache: HTTPCache,
        url: URL, delivery: BodyDelivery
    ) async {
        let this = box.value
        let urlRequest = requestBox.value
        let client = this.client
        do {
            var head = HTTPRequest(method: HTTPRequest.Method(urlRequest.httpMethod ?? "GET") ?? .get, url: url)
            for (name, value) in urlRequest.allHTTPHeaderFields ?? [:] {
                if let name = HTTPField.Name(name) { head.headerFields.append(HTTPField(name: name, value: value)) }
            }
            let body = try Self.body(of: urlRequest)
            let response = try await cache.streamingResponse(
                for: head, body: body, mode: Self.mode(for: urlRequest.cachePolicy), followRedirects: true)
            guard !Task.isCancelled else { return }
            var fields: [String: String] = [:]
            for field in response.head.headerFields {
                fields[field.name.rawName] = fields[field.name.rawName].map { "\($0), \(field.value)" } ?? field.value
            }
            guard
                let http = HTTPURLResponse(
                    url: response.url, statusCode: response.head.status.code, httpVersion: "HTTP/1.1",
                    headerFields: fields)
            else {
                throw URLError(.badServerResponse)
            }
            client?.urlProtocol(this, didReceive: http, cacheStoragePolicy: .notAllowed)
            switch delivery {
            case .asItArrives:
                for try await chunk in response.body {
                    guard !Task.isCancelled else { return }
                    client?.urlProtocol(this, didLoad: chunk)
                }
            case .whole:
                let body = try await response.body.collect()
                guard !Task.isCancelled else { return }
                if !body.isEmpty { client?.urlProtocol(this, didLoad: body) }
            }
            client?.urlProtocolDidFinishLoading(this)
        } catch {
            // Once stopped, the protocol tells its client nothing more (a cancelled wait for the
            // body ends here; on Linux the session has already forgotten the task, and traps).
            guard !Task.isCancelled else { return }
            client?.urlProtocol(this, didFailWithError: Self.urlError(for: error))
        }
    }

    /// Stops waiting for the cache; a shared origin fetch goes on for others.
    override public func stopLoading() {
        loading.withLock { $0?.cancel() }
    }

    /// The request body from `httpBody` or, read whole, from `httpBodyStream`.
    static func body(of request: URLRequest) throws -> Data? {
        if let body = request.httpBody { return body }
        guard let stream = request.httpBodyStream else { return nil }
        stream.open()
        defer { stream.close() }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let read = stream.read(&buffer, maxLength: buffer.count)
            if read < 0 { throw stream.streamError ?? URLError(.cannotLoadFromNetwork) }
            if read == 0 { break }
            data.append(buffer, count: read)
        }
        return data
    }
}

/// Carries a value the compiler cannot prove Sendable across a task boundary; used only where
/// the framework's contract makes the access safe.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// ``WebCacheURLProtocol`` delivering bodies as they arrive (``WebCacheURLProtocol/BodyDelivery/asItArrives``).
final class ArrivingBodyURLProtocol: WebCacheURLProtocol {
    override class var bodyDelivery: BodyDelivery { .asItArrives }
}

/// ``WebCacheURLProtocol`` delivering bodies whole (``WebCacheURLProtocol/BodyDelivery/whole``).
final class WholeBodyURLProtocol: WebCacheURLProtocol {
    override class var bodyDelivery: BodyDelivery { .whole }
}
