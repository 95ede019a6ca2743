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

    /// The columns in the order ``init(row:)`` reads them; listing queries may replace
    /// `bodyInline` by `NULL AS bodyInline`.
    static let selection = """
        id, namespace, method, url, host, varyKey, status, requestHeaders, responseHeaders, requestTime, \
        responseTime, lastAccess, bodySize, bodyChecksum, bodyFile, bodyInline, appExpiry, discardAfter, groupName, pinned
        """
    static let selectionWithoutBodies = selection.replacingOccurrences(of: "bodyInline", with: "NULL AS bodyInline")

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    /// The entry this row describes, or `nil` when its stored text cannot be read back.
    func entry() -> CacheEntry? {
        guard let id, let requestFields = HeaderCoding.decode(requestHeaders),
            let responseFields = HeaderCoding.decode(responseHeaders),
            let requestMethod = HTTPRequest.Method(method),
            (100...999).contains(status),  // HTTPResponse.Status traps on any other
            bodySize >= 0,  // ranges of the body are counted within 0..<bodySize
            let request = Self.storedRequest(method: requestMethod, url: url, fields: requestFields)
        else { return nil }
        let body: BodyLocation
        if let bodyInline {
            guard bodyInline.count == bodySize else { return nil }
            body = .data(bodyInline)
        } else if let bodyFile {
            guard BodyFiles.isBodyName(bodyFile) else { return nil }  // never a file outside the store
            body = .file(name: bodyFile, checksum: UInt32(truncatingIfNeeded: bodyChecksum))
        } else {
            body = .inlineUnloaded  // listed without bodies; the schema guarantees one of the two
        }
        let stored = StoredResponse(
            request: request,
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

extension EntryRow {
    /// The request an entry was stored for. A key's URL is nearly always in normal form, whose
    /// parts are read off its bytes; any other is parsed as a URL, as `HTTPRequest` does. `nil`
    /// for text that is no absolute URL (a damaged row), which `HTTPRequest` would trap on.
    static func storedRequest(method: HTTPRequest.Method, url: String, fields: HTTPFields) -> HTTPRequest? {
        if let parts = CacheKey.normalForm(of: url), parts.path.utf8.allSatisfy(Self.isURLByte) {
            return HTTPRequest(
                method: method, scheme: parts.scheme, authority: parts.authority, path: parts.path,
                headerFields: fields)
        }
        guard let target = URL(string: url), target.scheme != nil, !(target.host ?? "").isEmpty else { return nil }
        return HTTPRequest(method: method, url: target, headerFields: fields)
    }

    /// Whether `byte` may stand in a URL's path or query as it is (RFC 3986 §3.3, §3.4):
    /// URL parsing would escape any other.
    private static func isURLByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "$")...UInt8(ascii: ";"),  // $ % & ' ( ) * + , - . / 0-9 : ;
            UInt8(ascii: "!"), UInt8(ascii: "="), UInt8(ascii: "?"), UInt8(ascii: "@"), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Positional decoding: the hot path of a disk hit, several times faster than `Codable`.
    init(row: Row) {
        id = row[0]
        namespace = row[1]
        method = row[2]
        url = row[3]
        host = row[4]
        varyKey = row[5]
        status = row[6]
        requestHeaders = row[7]
        responseHeaders = row[8]
        requestTime = row[9]
        responseTime = row[10]
        lastAccess = row[11]
        bodySize = row[12]
        bodyChecksum = row[13]
        bodyFile = row[14]
        bodyInline = row[15]
        appExpiry = row[16]
        discardAfter = row[17]
        groupName = row[18]
        pinned = row[19]
    }
}
