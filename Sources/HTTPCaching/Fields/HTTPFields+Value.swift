import HTTPTypes

extension HTTPFields {
    /// The value of the fields named `name`, exactly as `self[name]` gives it (several such
    /// fields joined with `, `, or `; ` for `Cookie`; `nil` when there is none), without the
    /// generic sequence `self[name]` builds for every read.
    ///
    /// A read of one field is the common case on every request and response the cache handles
    /// (a miss reads about fifteen); through `self[name]` each cost a lazy sequence of the
    /// matching fields and a generic join, about a fifth of a microsecond.
    @inlinable
    package func value(_ name: HTTPField.Name) -> String? {
        let wanted = name.canonicalName
        var found: String?
        for field in self where field.name.canonicalName == wanted {
            // Two or more: joined as the library joins them.
            if found != nil { return self[name] }
            found = field.value
        }
        return found
    }
}
