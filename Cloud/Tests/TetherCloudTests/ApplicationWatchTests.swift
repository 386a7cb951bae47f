import Testing
@testable import TetherCloud

@Suite("The devices whose reports may show writes applied")
struct ApplicationWatchTests {
    @Test("a device is watched from its first write until its ledger shows nothing left to apply")
    func watchAndLeave() {
        let watch = ApplicationWatch()
        #expect(watch.watched(among: ["a"]).isEmpty)
        watch.sent(to: "a")
        watch.sent(to: "b")
        #expect(watch.watched(among: ["a"]) == ["a"])
        #expect(watch.watched(among: ["a", "b", "c"]).sorted() == ["a", "b"])
        let stamp = watch.stamp(of: "a")
        watch.leave("a", since: stamp)
        #expect(watch.watched(among: ["a"]).isEmpty)
        #expect(watch.watched(among: ["a", "b", "c"]) == ["b"])
    }

    @Test("a write sent while the ledger was read keeps the device watched")
    func sentDuringRead() {
        let watch = ApplicationWatch()
        watch.sent(to: "a")
        let stamp = watch.stamp(of: "a")
        watch.sent(to: "a")
        watch.leave("a", since: stamp)
        #expect(watch.watched(among: ["a"]) == ["a"])
        // A device that was not watched when the read began, and was sent to since, stays.
        let none = watch.stamp(of: "b")
        watch.sent(to: "b")
        watch.leave("b", since: none)
        #expect(watch.watched(among: ["b"]) == ["b"])
    }
}
