import HTTPCaching
import Testing

@Suite("A bounded table starts again empty when full")
struct BoundedTableTests {
    @Test("at most its capacity; a new key into a full table empties it first; an existing key is replaced in place")
    func bounded() {
        var table = BoundedTable<Int, String>(capacity: 3)
        for key in 0..<3 { table[key] = "v\(key)" }
        #expect(table.count == 3)
        table[1] = "again"
        #expect(table.count == 3 && table[1] == "again" && table[0] == "v0")
        table[9] = "new"
        #expect(table.count == 1 && table[9] == "new" && table[0] == nil)
        table[9] = nil
        #expect(table.count == 0)
    }
}
