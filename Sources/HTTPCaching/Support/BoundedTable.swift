/// A table of at most ``capacity`` values that starts again empty when a new key finds it full:
/// for memos whose loss now and then costs only working the values out again, where keeping
/// them in order of use (LRU) would cost more on every lookup than it saves.
package struct BoundedTable<Key: Hashable, Value> {
    /// The most values held.
    package let capacity: Int
    private var values: [Key: Value] = [:]

    /// An empty table for at most `capacity` values.
    package init(capacity: Int) {
        self.capacity = capacity
    }

    /// The value for `key`. Setting one for a new key when the table is full empties it first;
    /// setting `nil` removes it.
    package subscript(key: Key) -> Value? {
        get { values[key] }
        set {
            if newValue != nil, values[key] == nil, values.count >= capacity { values.removeAll(keepingCapacity: true) }
            values[key] = newValue
        }
    }

    /// How many values are held.
    package var count: Int { values.count }

    /// Empties the table.
    package mutating func removeAll() {
        values.removeAll(keepingCapacity: true)
    }
}

extension BoundedTable: Sendable where Key: Sendable, Value: Sendable {}
