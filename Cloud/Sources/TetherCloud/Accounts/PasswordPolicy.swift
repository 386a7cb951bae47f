/// The reference's policy: at least 8 characters, from three of the four classes upper case,
/// lower case, digits and symbols. At most 72 bytes, the most bcrypt reads.
enum PasswordPolicy {
    static func check(_ password: String, field: String = "password") throws(CloudAPIError) {
        guard password.count >= 8 else {
            throw .formInvalid(detail: "\(field) must have at least 8 characters")
        }
        guard password.utf8.count <= 72 else {
            throw .formInvalid(detail: "\(field) must have at most 72 bytes")
        }
        var classes = 0
        if password.contains(where: \.isUppercase) { classes += 1 }
        if password.contains(where: \.isLowercase) { classes += 1 }
        if password.contains(where: \.isNumber) { classes += 1 }
        if password.contains(where: { !$0.isLetter && !$0.isNumber }) { classes += 1 }
        guard classes >= 3 else {
            throw .formInvalid(detail: "\(field) must use three of: upper case, lower case, digits, symbols")
        }
    }
}
