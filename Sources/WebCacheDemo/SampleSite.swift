#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The small website bundled with WebCache for `webcache demo` and the browser check: three
/// pages, stylesheets that import others, a web font, images with `srcset`, a `<picture>`, an
/// `<iframe>` and a script. Sources in `Resources/sample-site/`.
public enum SampleSite {
    /// One file of the site.
    public struct File: Sendable {
        /// `text/html; charset=utf-8`, `image/svg+xml`, …
        public var contentType: String
        /// The bytes.
        public var body: Data
    }

    /// The pages a visitor opens (the iframe's page is a resource of the gallery).
    public static let pages = ["/index.html", "/guide.html", "/gallery.html"]

    /// Every file by path (`/css/site.css`).
    public static let files: [String: File] = encodedFiles.mapValues { contentType, encoded in
        File(contentType: contentType, body: Data(base64Encoded: encoded) ?? Data())
    }
}
