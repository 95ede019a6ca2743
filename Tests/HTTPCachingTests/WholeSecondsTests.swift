import Foundation
import Testing

@testable import HTTPCaching

@Suite("Whole seconds")
struct WholeSecondsTests {
    @Test("intervals beyond any date, or no number, become bounded whole seconds, never a trap")
    func bounded() {
        let limit = WholeSeconds.limit
        #expect(WholeSeconds.roundedDown(1.5) == 1)
        #expect(WholeSeconds.roundedDown(-1.5) == -2)
        #expect(WholeSeconds.roundedUp(1.2) == 2)
        #expect(WholeSeconds.roundedUp(-1.2) == -1)
        #expect(WholeSeconds.roundedDown(.infinity) == limit)
        #expect(WholeSeconds.roundedDown(-.infinity) == -limit)
        #expect(WholeSeconds.roundedDown(.nan) == -limit)
        #expect(WholeSeconds.roundedUp(.nan) == -limit)
        #expect(WholeSeconds.roundedDown(Double(Int.max)) == limit)
        #expect(WholeSeconds.roundedUp(-1e300) == -limit)
        #expect(WholeSeconds.clamped(Int.max) == limit)
        #expect(WholeSeconds.clamped(Int.min) == -limit)
        #expect(WholeSeconds.clamped(3600) == 3600)
    }
}
