import ArgumentParser
import HTTPTypes

/// A `Name: value` header line given on the command line (`-H 'Cache-Control: max-age=60'`).
struct HeaderLine: ExpressibleByArgument, Sendable {
    let field: HTTPField

    init?(argument: String) {
        guard let colon = argument.firstIndex(of: ":"),
            let name = HTTPField.Name(String(argument[..<colon]).trimmingCharacters(in: " \t"))
        else { return nil }
        let value = String(argument[argument.index(after: colon)...]).trimmingCharacters(in: " \t")
        field = HTTPField(name: name, value: value)
    }

    static func fields(_ lines: [HeaderLine]) -> HTTPFields {
        HTTPFields(lines.map(\.field))
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
