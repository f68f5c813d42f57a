import FoundationEssentials
import JSONKit
import MicroHTTP
import SheetPolicy
import SheetService
import SheetWire

/// The `--catalog` file: `{"sheets": [definition, ...]}` in the API's own definition format.
enum CatalogFile {
    /// Every definition of the file, or an error naming the first bad entry.
    static func load(path: String) throws(ConfigurationError) -> [SheetDefinition] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("catalog \(path): cannot read the file")
        }
        let root: [String: JSONValue]
        do {
            root = try JSONBody.object(Array(data), subject: "the file")
        } catch {
            throw ConfigurationError("catalog \(path): \(error.detail)")
        }
        guard root.count == 1, case .array(let entries)? = root["sheets"] else {
            throw ConfigurationError("catalog \(path): expected {\"sheets\": [...]}")
        }
        var definitions: [SheetDefinition] = []
        var seen: Set<String> = []
        for (index, entry) in entries.enumerated() {
            guard let object = entry.objectMembers else {
                throw ConfigurationError("catalog \(path): sheets[\(index)] is not an object")
            }
            var name = "sheets[\(index)]"
            if case .string(let id)? = object["id"] { name += " '\(id)'" }
            do {
                let definition = try SheetDefinition.decode(object, pathId: nil).checkingDesignRules()
                guard seen.insert(definition.id).inserted else {
                    throw ConfigurationError("catalog \(path): \(name): the id appears twice")
                }
                definitions.append(definition)
            } catch let error as WireError {
                throw ConfigurationError("catalog \(path): \(name): \(error.detail)")
            } catch let error as ConfigurationError {
                throw error
            } catch {
                throw ConfigurationError("catalog \(path): \(name): \(error)")
            }
        }
        return definitions
    }
}
