// Checks the chart's dashboards against the Grafana Foundation SDK's dashboard types
// (tests/integration/chart/dashboard_types_test.py runs it).
module ddp3d.io/tests/dashboard-types

go 1.26.0

require github.com/grafana/grafana-foundation-sdk/go v0.0.22
