import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What happened to one resource.
public struct ResourceResult: Sendable, Hashable {
    /// The URL requested.
    public var url: URL
    /// The URL that answered, after redirects.
    public var finalURL: URL
    /// What it is for (`nil` for the page itself).
    public var kind: DiscoveredReference.Kind?
    /// The status of the final response, when there was one.
    public var status: Int?
    /// Body bytes.
    public var bytes: Int
    /// Whether the cache answered without the origin.
    public var fromCache: Bool
    /// Whether the stored copy was kept as it was because the origin was unreachable or did not
    /// answer in time (`Cache-Status` detail `offline` or `network-timeout`): usable offline,
    /// but not refreshed.
    public var keptOffline = false
    /// Why it failed, if it did.
    public var failure: String?
    /// How long it took.
    public var duration: Duration

    /// Whether it is usable offline now.
    public var succeeded: Bool { failure == nil }
}

/// One page of a preload run: the page, every resource it needs, and whether all of them are
/// now in the cache.
public struct PageReport: Sendable, Hashable {
    /// The page.
    public var page: URL
    /// The page first, then its resources (nested stylesheets and frames included).
    public var resources: [ResourceResult]
    /// Whether the manifest was recorded (pinning the resources).
    public var isPinned: Bool

    /// The resources that failed.
    public var failures: [ResourceResult] { resources.filter { !$0.succeeded } }
    /// Whether every resource is in the cache: the page will load offline.
    public var isComplete: Bool { failures.isEmpty }
    /// The resources kept as they were because the origin could not be reached (see
    /// ``ResourceResult/keptOffline``).
    public var keptOffline: [ResourceResult] { resources.filter(\.keptOffline) }
    /// Body bytes of the page and its resources.
    public var bytes: Int { resources.reduce(0) { $0 + $1.bytes } }
}

/// Progress of a preload run, as it happens.
public enum PreloadEvent: Sendable {
    /// A request started.
    case started(URL, DiscoveredReference.Kind?)
    /// A resource is in the cache.
    case finished(ResourceResult)
    /// A resource could not be stored.
    case failed(ResourceResult)
    /// A page and all its resources are done.
    case pageFinished(PageReport)
    /// The run is over; the reports of every page.
    case completed([PageReport])
}
