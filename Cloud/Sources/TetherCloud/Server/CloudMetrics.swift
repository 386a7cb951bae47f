public import Prometheus

/// The cloud's own counters, served at `/metrics` in the Prometheus text format. HTTP request
/// metrics join them when the process bootstraps swift-metrics with the same registry
/// (`tether-cloud serve` does).
public struct CloudMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let registrations: Counter
    private let loginSuccesses: Counter
    private let loginFailures: Counter
    private let uplinks: Counter
    private let uplinksRejected: Counter
    private let uplinksDropped: Counter
    private let commandsCounter: Counter
    private let presenceOnline: Counter
    private let presenceOffline: Counter

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        registrations = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "tether_cloud", metricName: "registrations", unitName: "total",
                helpText: "Users registered, and anonymous users logged in."
            ))
        let logins = MetricNameDescriptor(namespace: "tether_cloud", metricName: "logins", unitName: "total", helpText: "Password logins by result.")
        loginSuccesses = registry.makeCounter(descriptor: logins, labels: [("result", "success")])
        loginFailures = registry.makeCounter(descriptor: logins, labels: [("result", "failure")])
        let uplink = MetricNameDescriptor(namespace: "tether_gateway", metricName: "uplinks", unitName: "total", helpText: "Device messages by outcome.")
        uplinks = registry.makeCounter(descriptor: uplink, labels: [("result", "processed")])
        uplinksRejected = registry.makeCounter(descriptor: uplink, labels: [("result", "malformed")])
        uplinksDropped = registry.makeCounter(descriptor: uplink, labels: [("result", "dropped")])
        commandsCounter = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "tether_cloud", metricName: "commands", unitName: "total", helpText: "Commands accepted into the ledger."
            ))
        let presence = MetricNameDescriptor(
            namespace: "tether_gateway", metricName: "presence", unitName: "total",
            helpText: "Devices recorded online or offline by this node (written to the database).")
        presenceOnline = registry.makeCounter(descriptor: presence, labels: [("state", "online")])
        presenceOffline = registry.makeCounter(descriptor: presence, labels: [("state", "offline")])
    }

    func uplink(processed: Bool) { (processed ? uplinks : uplinksRejected).increment() }
    func uplinkDropped() { uplinksDropped.increment() }
    func commandAccepted() { commandsCounter.increment() }
    func presenceRecorded(online: Int, offline: Int) {
        if online > 0 { presenceOnline.increment(by: Int64(online)) }
        if offline > 0 { presenceOffline.increment(by: Int64(offline)) }
    }

    func registered() { registrations.increment() }

    func logins(succeeded: Bool) {
        (succeeded ? loginSuccesses : loginFailures).increment()
    }
}
