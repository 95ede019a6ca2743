import HTTPCaching

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A URL a page or stylesheet needs, resolved, with what it is for.
public struct DiscoveredReference: Sendable, Hashable, CustomStringConvertible {
    /// What the reference is for; it decides how the preloader follows it.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A stylesheet: fetched and scanned for what it needs in turn.
        case stylesheet
        /// A script.
        case script
        /// An image (also icons and posters).
        case image
        /// A font.
        case font
        /// Audio or video.
        case media
        /// A nested page (`<iframe>`): scanned like a page, kept in the same manifest.
        case frame
        /// A web app manifest.
        case manifest
        /// Anything else a page loads (`<link rel=preload as=fetch>`, `<object>`, …).
        case other
        /// A link to another page (`<a href>`), followed only when crawling.
        case link
    }

    /// The absolute URL, without its fragment.
    public var url: URL
    /// What it is for.
    public var kind: Kind

    /// Creates a reference.
    public init(url: URL, kind: Kind) {
        self.url = url
        self.kind = kind
    }

    /// `kind url`.
    public var description: String { "\(kind.rawValue) \(url.absoluteString)" }
}

extension DiscoveredReference {
    /// Resolves `reference` against `base`; `nil` for what is not fetched over HTTP (`data:`,
    /// `javascript:`, `mailto:`, `about:`, `blob:`, fragments alone) or does not parse.
    static func resolve(_ reference: String, against base: URL, kind: Kind) -> DiscoveredReference? {
        let trimmed = reference.trimmingWhitespace()
        guard !trimmed.isEmpty, !trimmed.hasPrefix("#"),
            let resolved = URL(string: trimmed, relativeTo: base)?.absoluteURL
                ?? URL(
                    string: trimmed.addingPercentEncoding(withAllowedCharacters: .urlFragmentAllowed) ?? "",
                    relativeTo: base)?.absoluteURL,
            HTTPURLs.isAbsoluteHTTP(resolved)
        else { return nil }
        var components = URLComponents(url: resolved, resolvingAgainstBaseURL: false)
        components?.fragment = nil
        guard let url = components?.url else { return nil }
        return DiscoveredReference(url: url, kind: kind)
    }

    /// The kind a stylesheet's `url(…)` most likely is, by its extension.
    static func kindOfStyleResource(_ url: URL) -> Kind {
        switch url.pathExtension.lowercased() {
        case "woff", "woff2", "ttf", "otf", "eot": return .font
        case "css": return .stylesheet
        default: return .image
        }
    }
}
