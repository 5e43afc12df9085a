/// "1 donation", "2 donations": a count with its noun, singular for one.
/// - Parameters:
///   - plural: the plural when it is not the noun and an `s` ("1 person", "3 people").
func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
    "\(count) " + (count == 1 ? noun : plural ?? noun + "s")
}
