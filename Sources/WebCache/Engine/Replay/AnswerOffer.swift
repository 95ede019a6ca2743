/// A fresh answer from the store that the engine offers to a caller that keeps the encodings
/// of answers (``HTTPCache/storedAnswer(for:url:bodyFilesFrom:sharing:)``): requests that differ
/// in their bytes but are answered alike share one encoding.
package struct AnswerOffer: Sendable {
    /// The same for every request the entry answers alike: see
    /// ``ReplayTerms/answerIdentity``.
    package let identity: ReplayTerms.AnswerIdentity
    /// Whether the body goes from the entry's file (always, for a range).
    package let bodyInFile: Bool
    /// For a request with one satisfiable `Range`, the bytes of the body its 206 sends; `nil`
    /// for the whole body. Answers of different ranges differ in `Content-Range` and
    /// `Content-Length` alone, so one encoding of the rest of the head serves them all.
    package let range: Range<Int>?
}
