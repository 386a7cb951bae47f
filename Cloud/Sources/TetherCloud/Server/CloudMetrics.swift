public import Prometheus

/// The cloud's own counters, served at `/metrics` in the Prometheus text format. HTTP request
/// metrics join them when the process bootstraps swift-metrics with the same registry
/// (`tether-cloud serve` does).
public struct CloudMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let registrations: Counter
    private let loginSuccesses: Counter
    private let loginFailures: Counter

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        registrations = registry.makeCounter(descriptor: MetricNameDescriptor(
            namespace: "tether_cloud", metricName: "registrations", unitName: "total",
            helpText: "Users registered, and anonymous users logged in."
        ))
        let logins = MetricNameDescriptor(namespace: "tether_cloud", metricName: "logins", unitName: "total", helpText: "Password logins by result.")
        loginSuccesses = registry.makeCounter(descriptor: logins, labels: [("result", "success")])
        loginFailures = registry.makeCounter(descriptor: logins, labels: [("result", "failure")])
    }

    func registered() { registrations.increment() }

    func logins(succeeded: Bool) {
        (succeeded ? loginSuccesses : loginFailures).increment()
    }
}
