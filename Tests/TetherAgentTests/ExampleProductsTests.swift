import Testing
import TetherAgent
import TetherCore
import TetherTestSupport

@Suite("Built-in example products")
struct ExampleProductsTests {
    @Test("the built-in pet house is the products/pet-house.json document")
    func petHouseMatchesFile() throws {
        #expect(ExampleProducts.petHouse == (try Fixtures.petHouse()))
    }
}
