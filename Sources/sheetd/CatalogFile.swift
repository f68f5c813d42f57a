import FoundationEssentials
import SheetPolicy
import SheetService

/// The `--catalog` file: `{"sheets": [definition, ...]}` in the API's own definition format, read by
/// the one catalog file reader (`CatalogCheck`, which `sheetd catalog check` and the impact route use),
/// with the server's catalog limits.
enum CatalogFile {
    /// Every definition of the file, or an error naming the first error finding (and how many more).
    static func load(path: String, limits: CatalogLimits) throws(ConfigurationError) -> [SheetDefinition] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("catalog \(path): cannot read the file")
        }
        let (findings, definitions) = CatalogCheck.validate(Array(data), limits: limits)
        let errors = findings.filter { $0.severity == .error }
        guard let first = errors.first else { return definitions }
        var message = "catalog \(path): \(first.path.isEmpty ? "" : "\(first.path): ")\(first.reason)"
        if let id = first.sheetId { message += " (sheet '\(id)')" }
        if errors.count > 1 { message += "; and \(errors.count - 1) more (sheetd catalog check \(path) lists them)" }
        throw ConfigurationError(message)
    }
}
