import Foundation
import HTTPCaching
import WebCache
import Yams

#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

extension StorageSettings {
    private struct File: Decodable {
        var storage: StorageSettings?
    }

    /// Reads the `storage` section of a YAML configuration (empty settings when absent).
    public static func parse(_ text: String, source: String = "configuration") throws -> StorageSettings {
        do {
            return try YAMLDecoder().decode(File.self, from: text).storage ?? StorageSettings()
        } catch {
            throw PolicyError(.invalidConfiguration, "\(source) has an invalid storage section: \(error)")
        }
    }
}
