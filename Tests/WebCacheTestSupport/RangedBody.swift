import Foundation
import HTTPCaching

/// How an origin that answers one range per request answers: the piece of a body a `Range`
/// field asks for (its first range), with the `Content-Range` to send; `nil` for the whole body
/// (no field, an invalid or unsatisfiable one).
public func rangedPiece(of body: Data, for rangeField: String?) -> (range: Range<Int>, contentRange: String)? {
    guard let rangeField, let ranges = ByteRangeRequest(rangeField),
        case .satisfiable(let pieces) = ranges.resolve(length: body.count),
        let piece = pieces.first
    else { return nil }
    return (piece, "bytes \(piece.lowerBound)-\(piece.upperBound - 1)/\(body.count)")
}
