import HTTPCaching
import Testing

@Suite("A bounded table lets its oldest values go, one at a time, when full")
struct BoundedTableTests {
    @Test("at most its capacity; a new key into a full table lets the oldest go; an existing key is replaced in place")
    func bounded() {
        var table = BoundedTable<Int, String>(capacity: 3)
        for key in 0..<3 { table[key] = "v\(key)" }
        #expect(table.count == 3)
        table[1] = "again"
        #expect(table.count == 3 && table[1] == "again" && table[0] == "v0")
        table[9] = "new"
        #expect(table.count == 3 && table[9] == "new" && table[0] == nil && table[1] == "again" && table[2] == "v2")
        let set = table.updateValue("newer", forKey: 10)
        #expect(set.replaced == nil && set.letGo == "again")
        #expect(table.updateValue("newest", forKey: 10) == ("newer", nil))
        table[9] = nil
        #expect(table.count == 2 && table[9] == nil)
    }

    @Test("a removed key's place goes without taking another value; a key that comes back is kept")
    func removedKeys() {
        var table = BoundedTable<Int, Int>(capacity: 3)
        for key in 0..<3 { table[key] = key }
        table[0] = nil
        table[3] = 3  // takes the removed key's place: nothing else goes
        #expect(table.count == 3 && [1, 2, 3].allSatisfy { table[$0] == $0 })
        table[1] = nil
        table[1] = 1  // back, after its place went to 4 below
        table[4] = 4
        #expect(table.count == 3 && table[4] == 4)
        for key in 100..<1000 { table[key] = key }  // many rounds of the ring
        #expect(table.count == 3 && table[997] == 997 && table[998] == 998 && table[999] == 999)
    }

    @Test("the oldest values can be taken out one by one, in the order they came")
    func removeOldest() {
        var table = BoundedTable<String, Int>(capacity: 4)
        for (index, key) in ["a", "b", "c", "d", "e", "f"].enumerated() { table[key] = index }
        table["d"] = nil
        #expect(table.removeOldest() == 2)  // c; a and b went to make room for e and f
        #expect(table.removeOldest() == 4)  // e; d was removed
        table["g"] = 6
        #expect(table.removeOldest() == 5)
        #expect(table.removeOldest() == 6)
        #expect(table.removeOldest() == nil && table.count == 0)
        table["h"] = 7
        #expect(table.count == 1 && table["h"] == 7)
        table.removeAll()
        #expect(table.count == 0 && table.removeOldest() == nil)
    }

    @Test("a full table costs the same for every new key: none empties the table")
    func noSuddenEmptying() {
        var table = BoundedTable<Int, [Int]>(capacity: 1000)
        var countsOnceFull = Set<Int>()
        for key in 0..<10_000 {
            table[key] = [key]
            if key >= 999 { countsOnceFull.insert(table.count) }
        }
        #expect(countsOnceFull == [1000])
        #expect(table[8999] == nil && table[9000] == [9000])
    }
}
