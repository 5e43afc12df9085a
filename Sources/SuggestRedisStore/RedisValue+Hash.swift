import RedisCluster

extension [RedisValue] {
    /// The field and value pairs of a hash's reply (`HGETALL`, `CONFIG GET`), which lists them in turn; a last
    /// field without its value is left out.
    var fieldPairs: [(field: RedisValue, value: RedisValue)] {
        stride(from: 0, to: count - 1, by: 2).map { (field: self[$0], value: self[$0 + 1]) }
    }

    /// The pairs whose field and value are both text, as a dictionary.
    var textFields: [String: String] {
        var fields: [String: String] = [:]
        for (field, value) in fieldPairs {
            if let name = field.string, let text = value.string { fields[name] = text }
        }
        return fields
    }
}
