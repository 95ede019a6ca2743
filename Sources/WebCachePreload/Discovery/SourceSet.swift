/// The URLs of a `srcset` attribute (HTML §4.8.4.3.10 "parse a srcset attribute"): image
/// candidates separated by commas, each a URL and optional descriptors (`2x`, `480w`).
public enum SourceSet {
    /// The candidate URLs, in order.
    public static func urls(in srcset: String) -> [String] {
        let scalars = Array(srcset.unicodeScalars)
        var index = 0
        var urls: [String] = []
        while index < scalars.count {
            while index < scalars.count && (CSSReferences.isSpace(scalars[index]) || scalars[index] == ",") {
                index += 1
            }
            guard index < scalars.count else { break }
            var url = String.UnicodeScalarView()
            while index < scalars.count && !CSSReferences.isSpace(scalars[index]) {
                url.append(scalars[index])
                index += 1
            }
            var text = String(url)
            if text.hasSuffix(",") {
                while text.hasSuffix(",") { text.removeLast() }
            } else {
                // Descriptors run to the next comma outside parentheses.
                var depth = 0
                while index < scalars.count {
                    let scalar = scalars[index]
                    if scalar == "(" { depth += 1 }
                    if scalar == ")" { depth = max(0, depth - 1) }
                    if scalar == "," && depth == 0 { break }
                    index += 1
                }
            }
            if !text.isEmpty { urls.append(text) }
        }
        return urls
    }
}
