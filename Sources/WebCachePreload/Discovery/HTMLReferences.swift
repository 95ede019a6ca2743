import CHTMLScan

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a page needs and links to, found with libxml2's HTML parser (which recovers from broken
/// markup the way browsers do, more or less).
public struct PageReferences: Sendable, Hashable {
    /// The subresources, in document order, without duplicates.
    public var resources: [DiscoveredReference]
    /// The pages linked with `<a href>` / `<area href>`, for crawling.
    public var links: [URL]
    /// The base URL in force (`<base href>`, else the page's own URL).
    public var base: URL
}

/// Finds the subresources of an HTML document.
///
/// Covered: `<link rel=stylesheet|preload|modulepreload|icon|apple-touch-icon|manifest>`
/// (with `as` and `imagesrcset`), `<script src>`, `<img src srcset>`, `<picture><source srcset>`,
/// `<video src poster>`, `<audio src>`, `<source src>`, `<track src>`, `<iframe src>`,
/// `<embed src>`, `<object data>`, `<input type=image src>`, legacy `background` attributes,
/// `<base href>`, `style="…url(…)"` and `<style>` blocks (their `url(…)` and `@import`).
/// `data:`, `javascript:` and other non-HTTP URLs are ignored.
public enum HTMLReferences {
    /// Scans `html` (bytes as received; the parser detects the encoding from `<meta charset>`)
    /// fetched from `url`.
    public static func scan(_ html: Data, url: URL) -> PageReferences {
        let elements = parse(html, url: url)
        var walker = Walker(base: url)
        if let href = elements.first(where: { $0.name == "base" && $0.attributes["href"] != nil })?.attributes["href"],
            let base = URL(string: href.trimmingWhitespace(), relativeTo: url)?.absoluteURL
        {
            walker.base = base
        }
        for element in elements { walker.examine(element) }
        return PageReferences(resources: walker.resources, links: walker.links, base: walker.base)
    }

    /// An element as the parser saw it.
    struct Element {
        var name: String
        var parent: String
        var attributes: [String: String]
        var text: String?
    }

    /// The elements ``Walker`` reads for what they are; any other is kept only for an attribute
    /// read on every element (``examinedAnywhere(_:)``), so that a page of many plain elements
    /// (or one nested very deep) costs no more than its references.
    static let examinedElements: Set<String> = [
        "link", "script", "img", "source", "video", "audio", "track", "iframe", "frame", "embed", "object", "input",
        "style", "a", "area", "base",
    ]

    /// Whether an attribute is read on every element: legacy `background` and inline `style`.
    static func examinedAnywhere(_ attribute: String) -> Bool {
        attribute == "background" || attribute == "style"
    }

    /// Every element of the document that may hold a reference (``examinedElements``, or any with
    /// an attribute ``examinedAnywhere(_:)``), in order.
    static func parse(_ html: Data, url: URL) -> [Element] {
        guard !html.isEmpty, html.count < Int(Int32.max) else { return [] }
        final class Collector {
            var elements: [Element] = []
        }
        let collector = Collector()
        let context = Unmanaged.passUnretained(collector).toOpaque()
        _ = html.withUnsafeBytes { bytes in
            webcache_scan_html(
                bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), url.absoluteString, context
            ) {
                context, name, parent, attributes, count, text in
                guard let context, let name, let parent else { return }
                let elementName = String(cString: name)
                guard
                    Self.examinedElements.contains(elementName)
                        || (0..<Int(count)).contains(where: { index in
                            attributes?[2 * index].map { Self.examinedAnywhere(String(cString: $0)) } ?? false
                        })
                else { return }
                var element = Element(
                    name: elementName, parent: String(cString: parent), attributes: [:],
                    text: text.map { String(cString: $0) })
                for index in 0..<Int(count) {
                    guard let key = attributes?[2 * index], let value = attributes?[2 * index + 1] else { continue }
                    let name = String(cString: key)
                    if element.attributes[name] == nil { element.attributes[name] = String(cString: value) }
                }
                Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue().elements.append(element)
            }
        }
        return collector.elements
    }

    private struct Walker {
        var base: URL
        var resources: [DiscoveredReference] = []
        var links: [URL] = []
        private var seen = Set<DiscoveredReference>()
        private var seenLinks = Set<URL>()

        init(base: URL) {
            self.base = base
        }

        /// Reads an element for its references. An element name this switches on must be in
        /// ``HTMLReferences/examinedElements`` too, or `parse` never hands such elements over
        /// (the tests of every element kind catch one left out).
        mutating func examine(_ element: Element) {
            let attribute = { (name: String) in element.attributes[name] }
            switch element.name {
            case "link":
                examineLink(
                    rel: attribute("rel") ?? "", as: attribute("as"), href: attribute("href"),
                    imageSourceSet: attribute("imagesrcset"))
            case "script":
                add(attribute("src"), .script)
            case "img":
                add(attribute("src"), .image)
                addSourceSet(attribute("srcset"), .image)
            case "source":
                let kind: DiscoveredReference.Kind =
                    element.parent == "video" || element.parent == "audio" ? .media : .image
                add(attribute("src"), kind)
                addSourceSet(attribute("srcset"), kind)
            case "video":
                add(attribute("src"), .media)
                add(attribute("poster"), .image)
            case "audio", "track":
                add(attribute("src"), .media)
            case "iframe", "frame":
                add(attribute("src"), .frame)
            case "embed":
                add(attribute("src"), .other)
            case "object":
                add(attribute("data"), .other)
            case "input" where attribute("type")?.lowercased() == "image":
                add(attribute("src"), .image)
            case "style":
                if let css = element.text { addStyleSheet(css) }
            case "a", "area":
                if let href = attribute("href"),
                    let link = DiscoveredReference.resolve(href, against: base, kind: .link),
                    seenLinks.insert(link.url).inserted
                {
                    links.append(link.url)
                }
            default:
                break
            }
            add(attribute("background"), .image)
            if let style = attribute("style") { addStyleSheet(style) }
        }

        private mutating func examineLink(rel: String, as destination: String?, href: String?, imageSourceSet: String?)
        {
            let relations = Set(
                rel.lowercased().split(whereSeparator: {
                    $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{0C}"
                }).map(String.init))
            if relations.contains("stylesheet") {
                add(href, .stylesheet)
            } else if relations.contains("preload") || relations.contains("modulepreload")
                || relations.contains("prefetch")
            {
                let kind: DiscoveredReference.Kind
                switch destination?.lowercased() {
                case "style": kind = .stylesheet
                case "font": kind = .font
                case "image": kind = .image
                case "audio", "video", "track": kind = .media
                case "document": kind = .frame
                case "script", "worker", .none:
                    kind = relations.contains("modulepreload") || destination != nil ? .script : .other
                default: kind = .other
                }
                add(href, kind)
                addSourceSet(imageSourceSet, .image)
            } else if !relations.isDisjoint(with: [
                "icon", "apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon", "shortcut",
            ]) {
                add(href, .image)
            } else if relations.contains("manifest") {
                add(href, .manifest)
            }
        }

        private mutating func addStyleSheet(_ css: String) {
            for reference in CSSReferences.scan(css) {
                guard let resolved = DiscoveredReference.resolve(reference.url, against: base, kind: .other) else {
                    continue
                }
                append(
                    DiscoveredReference(
                        url: resolved.url,
                        kind: reference.isImport ? .stylesheet : DiscoveredReference.kindOfStyleResource(resolved.url)))
            }
        }

        private mutating func add(_ reference: String?, _ kind: DiscoveredReference.Kind) {
            guard let reference, let resolved = DiscoveredReference.resolve(reference, against: base, kind: kind) else {
                return
            }
            append(resolved)
        }

        private mutating func addSourceSet(_ srcset: String?, _ kind: DiscoveredReference.Kind) {
            guard let srcset else { return }
            for url in SourceSet.urls(in: srcset) { add(url, kind) }
        }

        private mutating func append(_ reference: DiscoveredReference) {
            if seen.insert(reference).inserted { resources.append(reference) }
        }
    }
}
