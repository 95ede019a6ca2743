import HTTPTypes
import WebCache
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Makes web pages readable offline (an app's "save for reading later"): fetches each page through
/// the cache, finds every subresource it needs (stylesheets and what they import, scripts, images
/// with their `srcset`, fonts, media, frames), fetches those too, and records a **page manifest**
/// that pins them all until the page is removed or refreshed as a unit.
///
/// ```swift
/// let preloader = Preloader(cache: cache)
/// let reports = await preloader.preload(pages: [URL(string: "https://example.com/guide")!])
/// print(reports[0].isComplete)        // every resource stored: the page loads offline
/// ```
///
/// Requests are bounded in total and per host; a URL needed by several pages is fetched once.
/// Progress comes as ``PreloadEvent``s through ``events(preloading:)``.
public final class Preloader: Sendable {
    let cache: HTTPCache
    let options: PreloadOptions

    /// Creates a preloader over `cache`.
    public init(cache: HTTPCache, options: PreloadOptions = PreloadOptions()) {
        self.cache = cache
        self.options = options
    }

    /// Preloads `pages` (and, with ``PreloadOptions/depth``, the pages they link to); returns
    /// one report per page. Events go to `progress` as they happen.
    public func preload(pages: [URL], progress: AsyncStream<PreloadEvent>.Continuation? = nil) async -> [PageReport] {
        let run = PreloadRun(cache: cache, options: options, progress: progress)
        var reports: [PageReport] = []
        var queued = Set(pages.map(\.absoluteString))
        var level = pages
        var depth = 0
        while !level.isEmpty {
            let room = max(0, options.maximumPages - reports.count)
            let batch = Array(level.prefix(room))
            let loaded = await withTaskGroup(of: (Int, PageReport, [URL]).self) { group in
                for (position, page) in batch.enumerated() {
                    group.addTask {
                        let (report, links) = await run.loadPage(page)
                        return (position, report, links)
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }.sorted { $0.0 < $1.0 }
            }
            var next: [URL] = []
            for (_, report, links) in loaded {
                reports.append(recordManifest(report))
                progress?.yield(.pageFinished(reports[reports.count - 1]))
                guard depth < options.depth else { continue }
                for link in links
                where run.inScope(link, of: report.page) && queued.insert(link.absoluteString).inserted {
                    next.append(link)
                }
            }
            level = next
            depth += 1
        }
        progress?.yield(.completed(reports))
        progress?.finish()
        return reports
    }

    /// Preloads `pages` and reports progress as an async sequence, ending with
    /// ``PreloadEvent/completed(_:)``. Cancelling the iteration cancels the run.
    public func events(preloading pages: [URL]) -> AsyncStream<PreloadEvent> {
        let (stream, continuation) = AsyncStream<PreloadEvent>.makeStream()
        let task = Task { _ = await preload(pages: pages, progress: continuation) }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Preloads a plain list of resources (an app's own list of what it will need offline), kept together as one
    /// manifest named `group`.
    public func preload(resources: [URL], group: String, progress: AsyncStream<PreloadEvent>.Continuation? = nil) async
        -> PageReport
    {
        let run = PreloadRun(cache: cache, options: options, progress: progress)
        let results = await withTaskGroup(of: (Int, ResourceResult).self) { tasks in
            for (position, url) in resources.enumerated() {
                tasks.addTask { (position, await run.fetch(url, kind: .other).result) }
            }
            return await tasks.reduce(into: []) { $0.append($1) }.sorted { $0.0 < $1.0 }.map(\.1)
        }
        let report = recordManifest(
            PageReport(
                page: URL(string: group) ?? resources.first ?? URL(fileURLWithPath: "/"), resources: results,
                isPinned: false), name: group)
        progress?.yield(.completed([report]))
        progress?.finish()
        return report
    }

    /// Records the manifest of a page (when pinning) and says so in its report. A run that
    /// could not fetch everything (offline, say) never shrinks a manifest already recorded: what
    /// the page held before stays held.
    private func recordManifest(_ report: PageReport, name: String? = nil) -> PageReport {
        guard options.pin else { return report }
        var report = report
        let name = name ?? report.page.absoluteString
        var urls = report.resources.flatMap { [$0.url, $0.finalURL] }
        var isComplete = report.isComplete
        if !report.isComplete, let previous = try? cache.store.manifest(named: name) {
            urls += previous.resources.compactMap { URL(string: $0) }
            isComplete =
                previous.isComplete
                && report.failures.allSatisfy { failure in previous.resources.contains(failure.url.absoluteString) }
        }
        let manifest = PageManifest(
            name: name, resources: urls, isComplete: isComplete, createdAt: cache.configuration.now())
        do {
            try cache.store.save(manifest)
            report.isPinned = true
        } catch {
            cache.configuration.logger.warning("could not record the manifest of \(manifest.name): \(error)")
        }
        return report
    }
}
