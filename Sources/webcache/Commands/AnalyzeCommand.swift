import ArgumentParser
import Foundation
import HTTPCaching
import HTTPTypes

/// `webcache analyze`: what RFC 9111 says about a response, without any network or store.
struct AnalyzeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Explain how a cache treats a response with the given headers.",
        discussion: """
            Prints whether the response may be stored, its freshness lifetime, and what a cache \
            would do with it after --after seconds. Dates may be written as @N: N seconds from now.

            Example:
              webcache analyze -H 'Cache-Control: max-age=60' -H 'ETag: "v1"' --after 90
            """
    )

    @Option(
        name: [.customShort("H"), .customLong("header")], help: "A response header line, 'Name: value' (repeatable).")
    var headers: [HeaderLine] = []

    @Option(
        name: [.customShort("R"), .customLong("request-header")],
        help: "A request header line, 'Name: value' (repeatable).")
    var requestHeaders: [HeaderLine] = []

    @Option(help: "The response status code.")
    var status: Int = 200

    @Option(name: [.customShort("X"), .customLong("method")], help: "The request method.")
    var method: String = "GET"

    @Option(help: "Seconds between receiving the response and the request to answer.")
    var after: Int = 0

    @Flag(help: "Use the rules of a shared cache (a proxy) instead of a private one.")
    var shared = false

    @Option(help: "A targeted cache-control field to obey over Cache-Control, e.g. CDN-Cache-Control (repeatable).")
    var target: [String] = []

    @Flag(help: "Answer as if the origin were unreachable.")
    var offline = false

    func validate() throws {
        guard (100...999).contains(status) else {
            throw ValidationError("--status must be between 100 and 999, not \(status)")
        }
        guard HTTPRequest.Method(method) != nil else { throw ValidationError("'\(method)' is not a valid HTTP method") }
        for name in target where HTTPField.Name(name) == nil {
            throw ValidationError("'\(name)' is not a valid field name for --target")
        }
    }

    func run() throws {
        let now = Date()
        let targets = target.compactMap { HTTPField.Name($0) }
        let rules = CacheRules(kind: shared ? .shared : .private, targetedFields: targets)
        var request = HTTPRequest(method: HTTPRequest.Method(method)!, url: URL(string: "https://example.com/")!)
        request.headerFields = resolvingDates(HeaderLine.fields(requestHeaders), now: now)
        let response = HTTPResponse(
            status: .init(code: status), headerFields: resolvingDates(HeaderLine.fields(headers), now: now))

        let storability = rules.storability(of: response, for: request)
        print(
            "cache:       \(rules.kind)\(targets.isEmpty ? "" : ", obeying \(targets.map(\.rawName).joined(separator: ", "))")"
        )
        print("storable:    \(storability.isStorable ? "yes" : "no") — \(storability.reasons.joined(separator: "; "))")
        guard storability.isStorable else { return }
        let stored = StoredResponse(
            request: request, response: rules.headForStorage(response, storability: storability),
            requestTime: now, responseTime: now)
        print("freshness:   \(rules.freshness(of: stored))")
        let later = now.addingTimeInterval(TimeInterval(after))
        let decision = rules.reuse(
            stored, for: request, now: later, conditions: ReuseConditions(originReachable: !offline))
        print("after \(after) s: \(decision.action) — \(decision)")
        if decision.action == .validate, let validators = rules.validatorSummary(for: stored) {
            print("validate with \(validators)")
        }
        if decision.mayServeStaleOnError { print("if the origin fails: the stored response may be served stale") }
    }

    /// Replaces `@N` values with the HTTP date N seconds from `now`.
    private func resolvingDates(_ fields: HTTPFields, now: Date) -> HTTPFields {
        HTTPFields(
            fields.map { field in
                guard field.value.hasPrefix("@"), let offset = Int(field.value.dropFirst()) else { return field }
                return HTTPField(name: field.name, value: HTTPDate.format(now.addingTimeInterval(TimeInterval(offset))))
            })
    }
}
