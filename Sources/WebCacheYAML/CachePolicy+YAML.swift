import Foundation
import HTTPCaching
import WebCache
import Yams

#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// Configuration files in YAML (or JSON, which YAML reads too). An app that configures its
/// cache in code does not need this module, nor Yams.
extension CachePolicy {
    /// Reads a policy from a YAML (or JSON) file.
    public static func load(from file: URL) throws -> CachePolicy {
        let text: String
        do {
            text = try String(contentsOf: file, encoding: .utf8)
        } catch {
            throw PolicyError(
                .unreadableFile, "cannot read the configuration file \(file.path): \(error.localizedDescription)")
        }
        return try parse(text, source: file.path)
    }

    /// Reads a policy from YAML text.
    public static func parse(_ text: String, source: String = "configuration") throws -> CachePolicy {
        do {
            return try YAMLDecoder().decode(CachePolicy.self, from: text)
        } catch {
            throw PolicyError(.invalidConfiguration, "\(source) is not a valid WebCache configuration", cause: error)
        }
    }
}
