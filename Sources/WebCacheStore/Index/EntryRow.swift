import GRDB
import HTTPCaching
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One row of the `entry` table.
struct EntryRow: Codable, FetchableRecord, MutablePersistableRecord, Sendable {
    static let databaseTableName = "entry"

    var id: Int64?
    var namespace: String
    var method: String
    var url: String
    var host: String
    var varyKey: String
    var status: Int
    var requestHeaders: String
    var responseHeaders: String
    var requestTime: Double
    var responseTime: Double
    var lastAccess: Double
    var bodySize: Int
    var bodyChecksum: Int64
    var bodyFile: String?
    var bodyInline: Data?
    var appExpiry: Double?
    var discardAfter: Double?
    var groupName: String?
    var pinned: Bool

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let namespace = Column(CodingKeys.namespace)
        static let method = Column(CodingKeys.method)
        static let url = Column(CodingKeys.url)
        static let host = Column(CodingKeys.host)
        static let varyKey = Column(CodingKeys.varyKey)
        static let lastAccess = Column(CodingKeys.lastAccess)
        static let bodySize = Column(CodingKeys.bodySize)
        static let bodyFile = Column(CodingKeys.bodyFile)
        static let groupName = Column(CodingKeys.groupName)
        static let pinned = Column(CodingKeys.pinned)
        static let discardAfter = Column(CodingKeys.discardAfter)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    /// The entry this row describes, or `nil` when its stored text cannot be read back.
    func entry() -> CacheEntry? {
        guard let id, let requestFields = HeaderCoding.decode(requestHeaders),
            let responseFields = HeaderCoding.decode(responseHeaders),
            let requestMethod = HTTPRequest.Method(method), let target = URL(string: url)
        else { return nil }
        let body: BodyLocation
        if let bodyInline {
            body = .data(bodyInline)
        } else if let bodyFile {
            body = .file(name: bodyFile, checksum: UInt32(truncatingIfNeeded: bodyChecksum))
        } else {
            body = .inlineUnloaded  // listed without bodies; the schema guarantees one of the two
        }
        let stored = StoredResponse(
            request: HTTPRequest(method: requestMethod, url: target, headerFields: requestFields),
            response: HTTPResponse(status: .init(code: status), headerFields: responseFields),
            requestTime: Date(timeIntervalSince1970: requestTime),
            responseTime: Date(timeIntervalSince1970: responseTime))
        return CacheEntry(
            id: id, key: CacheKey(storedMethod: method, url: url, host: host), varyKey: varyKey, stored: stored,
            bodySize: bodySize, lastAccess: Date(timeIntervalSince1970: lastAccess),
            appExpiry: appExpiry.map(Date.init(timeIntervalSince1970:)),
            discardAfter: discardAfter.map(Date.init(timeIntervalSince1970:)),
            group: groupName, isPinned: pinned, body: body)
    }
}
