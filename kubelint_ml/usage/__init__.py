"""Sizing from observed usage (Prometheus, snapshots)."""

USAGE_FAMILY = "usage"  # the family of the rules that judge with observed usage
