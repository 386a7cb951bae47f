public import TetherCore

extension DeviceRegistrationForm {
    /// The form with `sign` set: HMAC-SHA256 of ``signingContent`` keyed with `secret` (the
    /// product secret for ``Authority/product``, the device's for ``Authority/device``), as
    /// Alink's dynamic registration signs.
    public func signed(with secret: String) -> DeviceRegistrationForm {
        var copy = self
        copy.sign = AlinkSignMethod.hmacsha256.sign(signingContent, key: secret)
        return copy
    }
}
