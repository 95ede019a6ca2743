/// A table of at most ``capacity`` values that lets the oldest go, one at a time, when a new key
/// finds it full: for memos whose loss now and then costs only working the values out again.
///
/// Values go in the order their keys came (first in, first out), not in order of use: keeping
/// them in order of use would cost more on every lookup than it saves. Letting one go per new key
/// keeps every insertion's cost the same; a table that emptied itself when full made the request
/// that found it so pay for releasing all of its values at once (8,192 of them: several
/// milliseconds on an event loop).
package struct BoundedTable<Key: Hashable, Value> {
    /// The most values held.
    package let capacity: Int
    private var values: [Key: Value] = [:]
    /// The keys in the order they came, oldest first. A key removed since keeps its place until
    /// its turn comes (then nothing goes), so the table never holds more values than
    /// ``capacity``.
    private var arrivals: ArrivalRing<Key>

    /// An empty table for at most `capacity` values (at least one).
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
        arrivals = ArrivalRing(capacity: self.capacity)
    }

    /// The value for `key`. Setting one for a new key when the table is full lets the oldest go
    /// first; setting `nil` removes it.
    package subscript(key: Key) -> Value? {
        get { values[key] }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                values[key] = nil
            }
        }
    }

    /// Sets the value for `key`; returns the value it replaced, if any, and the value let go to
    /// make room, if any (for a caller that keeps its own account of what the values cost).
    @discardableResult
    package mutating func updateValue(_ value: Value, forKey key: Key) -> (replaced: Value?, letGo: Value?) {
        if let replaced = values.updateValue(value, forKey: key) { return (replaced, nil) }
        // The departing key may be the one just set, when it had come before and been removed.
        guard let departing = arrivals.arrive(key), departing != key else { return (nil, nil) }
        return (nil, values.removeValue(forKey: departing))
    }

    /// Removes the value for `key` and returns it.
    @discardableResult
    package mutating func removeValue(forKey key: Key) -> Value? {
        values.removeValue(forKey: key)
    }

    /// Removes the oldest value the table holds and returns it; `nil` when it is empty. For a
    /// caller that keeps the values within a budget of its own.
    package mutating func removeOldest() -> Value? {
        while !values.isEmpty, let departing = arrivals.removeOldest() {
            if let value = values.removeValue(forKey: departing) { return value }
        }
        return nil
    }

    /// How many values are held.
    package var count: Int { values.count }

    /// Empties the table.
    package mutating func removeAll() {
        values.removeAll(keepingCapacity: true)
        arrivals = ArrivalRing(capacity: capacity)
    }
}

extension BoundedTable: Sendable where Key: Sendable, Value: Sendable {}

/// Keys in the order they came, at most `capacity` of them, oldest first: a ring whose slots are
/// made as they are first needed.
private struct ArrivalRing<Key> {
    let capacity: Int
    private var slots: [Key?] = []
    /// The slot of the oldest key.
    private var head = 0
    private var count = 0

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Notes `key` as the newest; when the ring was full, the oldest key makes room and is
    /// returned.
    mutating func arrive(_ key: Key) -> Key? {
        if count == capacity {
            let departing = slots[head]
            slots[head] = key
            head = (head + 1) % capacity
            return departing
        }
        let slot = (head + count) % capacity
        if slot == slots.count { slots.append(key) } else { slots[slot] = key }
        count += 1
        return nil
    }

    /// Takes the oldest key out; `nil` when there is none.
    mutating func removeOldest() -> Key? {
        guard count > 0 else { return nil }
        let departing = slots[head]
        slots[head] = nil
        head = (head + 1) % capacity
        count -= 1
        return departing
    }
}
extension ArrivalRing: Sendable where Key: Sendable {}
