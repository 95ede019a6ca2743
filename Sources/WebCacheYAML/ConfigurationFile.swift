import Foundation
import HTTPCaching
import WebCache
import Yams

#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// The parts of a configuration file that belong to no one type: for now, `cacert`.
///
/// ```yaml
/// cacert: [company-root.pem, /etc/ssl/test-ca.pem]
/// ```
public enum ConfigurationFile {
    private struct File: Decodable {
        var cacert: [String]?

        enum CodingKeys: String, CodingKey { case cacert }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let one = try? container.decodeIfPresent(String.self, forKey: .cacert) {
                cacert = [one]
            } else {
                cacert = try container.decodeIfPresent([String].self, forKey: .cacert)
            }
        }
    }

    /// The `cacert` entry of a YAML configuration (none when absent), relative paths taken
    /// from `directory` (the configuration file's): the extra certificate authorities HTTPS
    /// origins may be signed by (`OriginTrust(certificateFiles:)` in WebCacheNIO).
    public static func certificateAuthorityFiles(
        in text: String, source: String = "configuration", directory: URL? = nil
    ) throws -> [String] {
        let files: [String]
        do {
            files = try YAMLDecoder().decode(File.self, from: text).cacert ?? []
        } catch {
            throw PolicyError(
                .invalidConfiguration, "\(source) has an invalid cacert entry (a file or a list of files): \(error)",
                cause: error)
        }
        return files.map { file in
            guard !file.hasPrefix("/"), let directory else { return file }
            return directory.appendingPathComponent(file).path
        }
    }
}
