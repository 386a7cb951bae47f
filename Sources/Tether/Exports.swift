// `import Tether` is all an app needs: the model and value types, and the LAN protocol types
// that appear in the SDK's API.
@_exported public import TetherCore
@_exported public import TetherGizwitsLAN
@_exported public import TetherTuyaLAN
@_exported public import TetherProvisioning
@_exported public import TetherCloudClient
