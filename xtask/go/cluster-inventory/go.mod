module local.invalid/flotilla-testenv/cluster-inventory

go 1.24.0

// Pins the SIG Multicluster cluster-inventory-api release whose ClusterProfile CRD the plain
// test environment installs on its hub (xtask/src/gobuild.rs CLUSTER_INVENTORY copies it).
require sigs.k8s.io/cluster-inventory-api v0.0.0-20251124125836-445319b6307a
