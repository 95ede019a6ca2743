/// A code of one kind of error (`Domain`): compared by name, printed as its name. Each error
/// type declares its codes as static members in an extension, so that new ones can be added
/// without breaking a caller's `switch` (which needs a `default`):
///
/// ```swift
/// extension ErrorCode where Domain == CacheError {
///     public static var offlineMiss: Self { Self("offlineMiss") }
/// }
/// ```
public struct ErrorCode<Domain>: Hashable, Sendable, CustomStringConvertible {
    /// The code's name, as written in its declaration.
    public let name: String

    /// A code named `name`; only the error's own module makes its codes.
    package init(_ name: String) {
        self.name = name
    }

    /// The code's name.
    public var description: String { name }
}
